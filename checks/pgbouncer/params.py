"""Every [pgbouncer] parameter PgBouncer knows, with type, default and version range.

Sources: the parameter table `bouncer_params` in PgBouncer's src/main.c (names, types,
defaults, CF_NO_RELOAD = restart-only), the pgbouncer.ini(5) man page of 1.18.0 and
`SHOW CONFIG` of the 1.18.0 sandbox (tests/fixtures/validate/pgbouncer/
show_config_1.18.txt), and the PgBouncer changelog for the version each parameter
appeared in. Where the changelog did not state a version, `since` is our best reading
of the release history; it only decides "unknown in version X" findings.

Types follow libusual's parsers: "int" is strtol(base 0, so 0777 and 0x1F work, units
do not), "time" is seconds as a float (strtod), "bool" is an int used as 0/1, "enum" is a
case-insensitive lookup, "str"/"path"/"list" are taken verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbgauge.toolkit.db.version import Version, parse_version

KNOWN_VERSIONS: tuple[Version, ...] = (
    (1, 18), (1, 19), (1, 20), (1, 21), (1, 22), (1, 23), (1, 24), (1, 25))
LATEST: Version = KNOWN_VERSIONS[-1]

SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
POOL_MODES = ("session", "transaction", "statement")
AUTH_TYPES = ("any", "trust", "plain", "md5", "cert", "hba", "pam", "scram-sha-256", "ldap")
SYSLOG_FACILITIES = ("auth", "authpriv", "daemon", "user", "local0", "local1", "local2",
                     "local3", "local4", "local5", "local6", "local7")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # int, uint, time, bool, enum, str, path, list
    default: str | None
    restart: bool = False  # CF_NO_RELOAD: RELOAD silently keeps the old value
    since: Version = (1, 0)
    until: Version | None = None  # first version without it
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    deprecated: str | None = None  # why, and what to use instead
    defaults: tuple[tuple[Version, str], ...] = ()  # default changes: (from version, value)
    note: str | None = None

    def default_for(self, version: Version) -> str | None:
        value = self.default
        for since, changed in self.defaults:
            if version >= since:
                value = changed
        return value

    def exists_in(self, version: Version) -> bool:
        return version >= self.since and (self.until is None or version < self.until)


def _p(name: str, kind: str, default: str | None, **kw: object) -> Param:
    return Param(name, kind, default, **kw)  # type: ignore[arg-type]


_V = (1, 0)
PARAMS: dict[str, Param] = {p.name: p for p in (
    _p("admin_users", "list", ""),
    _p("application_name_add_host", "bool", "0"),
    _p("auth_dbname", "str", None, since=(1, 19)),
    _p("auth_file", "path", None),
    _p("auth_hba_file", "path", ""),
    _p("auth_ident_file", "path", None, since=(1, 23)),
    _p("auth_ldap_options", "str", None, since=(1, 25)),
    _p("auth_query", "str",
       "SELECT rolname, CASE WHEN rolvaliduntil < now() THEN NULL ELSE rolpassword END "
       "FROM pg_authid WHERE rolname=$1 AND rolcanlogin"),
    _p("auth_type", "enum", "md5", choices=AUTH_TYPES),
    _p("auth_user", "str", None),
    _p("autodb_idle_timeout", "time", "3600", minimum=0),
    _p("cancel_wait_timeout", "time", "10", since=(1, 19), minimum=0),
    _p("client_idle_timeout", "time", "0", minimum=0),
    _p("client_login_timeout", "time", "60", minimum=0),
    _p("client_tls13_ciphers", "str", None, since=(1, 25)),
    _p("client_tls_ca_file", "path", ""),
    _p("client_tls_cert_file", "path", ""),
    _p("client_tls_ciphers", "str", "fast", defaults=(((1, 25), "default"),)),
    _p("client_tls_dheparams", "str", "auto"),
    _p("client_tls_ecdhcurve", "str", "auto"),
    _p("client_tls_key_file", "path", ""),
    _p("client_tls_protocols", "str", "secure"),
    _p("client_tls_sslmode", "enum", "disable", choices=SSLMODES),
    _p("conffile", "path", None),
    _p("default_pool_size", "int", "20", minimum=0),
    _p("disable_pqexec", "bool", "0", restart=True),
    _p("dns_max_ttl", "time", "15", minimum=0),
    _p("dns_nxdomain_ttl", "time", "15", minimum=0),
    _p("dns_zone_check_period", "time", "0", minimum=0),
    _p("idle_transaction_timeout", "time", "0", minimum=0),
    _p("ignore_startup_parameters", "list", ""),
    _p("job_name", "str", "pgbouncer", restart=True),
    _p("listen_addr", "list", "", restart=True),
    _p("listen_backlog", "int", "128", restart=True, minimum=1),
    _p("listen_port", "int", "6432", restart=True, minimum=1, maximum=65535),
    _p("log_connections", "bool", "1"),
    _p("log_disconnections", "bool", "1"),
    _p("log_pooler_errors", "bool", "1"),
    _p("log_stats", "bool", "1"),
    _p("logfile", "path", ""),
    _p("max_client_conn", "int", "100", minimum=1),
    _p("max_db_client_connections", "int", "0", since=(1, 24), minimum=0),
    _p("max_db_connections", "int", "0", minimum=0),
    _p("max_packet_size", "uint", "2147483647", minimum=1, maximum=2147483647),
    _p("max_prepared_statements", "int", "0", since=(1, 21), minimum=0,
       defaults=(((1, 24), "200"),)),
    _p("max_user_client_connections", "int", "0", since=(1, 24), minimum=0),
    _p("max_user_connections", "int", "0", minimum=0),
    _p("min_pool_size", "int", "0", minimum=0),
    _p("peer_id", "int", "0", since=(1, 19), minimum=0, maximum=16383),
    _p("pidfile", "path", "", restart=True),
    _p("pkt_buf", "int", "4096", restart=True, minimum=512),
    _p("pool_mode", "enum", "session", choices=POOL_MODES),
    _p("query_timeout", "time", "0", minimum=0),
    _p("query_wait_notify", "time", "5", since=(1, 25), minimum=0),
    _p("query_wait_timeout", "time", "120", minimum=0),
    _p("reserve_pool_size", "int", "0", minimum=0),
    _p("reserve_pool_timeout", "time", "5", minimum=0),
    _p("resolv_conf", "path", "", restart=True),
    _p("sbuf_loopcnt", "int", "5", minimum=0),
    _p("scram_iterations", "int", "4096", since=(1, 25), minimum=1),
    _p("server_check_delay", "time", "30", minimum=0),
    _p("server_check_query", "str", "select 1", defaults=(((1, 23), "<empty>"),)),
    _p("server_connect_timeout", "time", "15", minimum=0),
    _p("server_fast_close", "bool", "0"),
    _p("server_idle_timeout", "time", "600", minimum=0),
    _p("server_lifetime", "time", "3600", minimum=0),
    _p("server_login_retry", "time", "15", minimum=0),
    _p("server_reset_query", "str", "DISCARD ALL"),
    _p("server_reset_query_always", "bool", "0"),
    _p("server_round_robin", "bool", "0"),
    _p("server_tls13_ciphers", "str", None, since=(1, 25)),
    _p("server_tls_ca_file", "path", ""),
    _p("server_tls_cert_file", "path", ""),
    _p("server_tls_ciphers", "str", "fast", defaults=(((1, 25), "default"),)),
    _p("server_tls_key_file", "path", ""),
    _p("server_tls_protocols", "str", "secure"),
    _p("server_tls_sslmode", "enum", "disable", choices=SSLMODES,
       defaults=(((1, 24), "prefer"),)),
    _p("so_reuseport", "bool", "0", restart=True),
    _p("stats_period", "int", "60", minimum=1),
    _p("stats_users", "list", ""),
    _p("suspend_timeout", "time", "10", minimum=0),
    _p("syslog", "bool", "0"),
    _p("syslog_facility", "str", "daemon", choices=SYSLOG_FACILITIES),
    _p("syslog_ident", "str", "pgbouncer"),
    _p("tcp_defer_accept", "int", "1", minimum=0),
    _p("tcp_keepalive", "bool", "1"),
    _p("tcp_keepcnt", "int", "0", minimum=0),
    _p("tcp_keepidle", "int", "0", minimum=0),
    _p("tcp_keepintvl", "int", "0", minimum=0),
    _p("tcp_socket_buffer", "int", "0", minimum=0),
    _p("tcp_user_timeout", "int", "0", minimum=0),
    _p("track_extra_parameters", "list", "IntervalStyle", restart=True, since=(1, 20)),
    _p("transaction_timeout", "time", "0", since=(1, 25), minimum=0),
    _p("unix_socket_dir", "path", "/tmp", restart=True),
    _p("unix_socket_group", "str", "", restart=True),
    _p("unix_socket_mode", "int", "0777", restart=True, minimum=0, maximum=0o777),
    _p("user", "str", None, restart=True),
    _p("verbose", "int", "0", minimum=0),
)}

# Parameters only the Windows build knows: on Linux they are "Unknown parameter".
WINDOWS_ONLY = {"service_name": "job_name"}

# Keys of a [databases] connection string and of a [users] line, by first version.
DATABASE_KEYS: dict[str, Version] = {
    "dbname": _V, "host": _V, "port": _V, "user": _V, "password": _V, "auth_user": _V,
    "pool_size": _V, "min_pool_size": _V, "reserve_pool": _V, "max_db_connections": _V,
    "pool_mode": _V, "connect_query": _V, "application_name": _V, "client_encoding": _V,
    "datestyle": _V, "timezone": _V, "auth_dbname": (1, 19), "auth_query": (1, 22),
    "server_lifetime": (1, 23), "load_balance_hosts": (1, 24),
    "max_db_client_connections": (1, 24), "reserve_pool_size": (1, 24),
}
USER_KEYS: dict[str, Version] = {
    "pool_mode": _V, "max_user_connections": _V, "pool_size": (1, 23),
    "max_user_client_connections": (1, 24), "reserve_pool_size": (1, 24),
    "query_timeout": (1, 24), "idle_transaction_timeout": (1, 24),
    "client_idle_timeout": (1, 24),
}
PEER_KEYS: dict[str, Version] = {"host": (1, 19), "port": (1, 19), "pool_size": (1, 19)}
PEERS_SINCE: Version = (1, 19)

# HBA authentication methods PgBouncer accepts, by first version (pam and any only work
# globally; ldap needs an LDAP-enabled build).
HBA_METHODS: dict[str, Version] = {
    "trust": _V, "reject": _V, "md5": _V, "password": _V, "peer": _V, "cert": _V,
    "scram-sha-256": (1, 14), "ldap": (1, 25),
}
HBA_OPTIONS_SINCE: Version = (1, 23)  # map= (user name maps) and ldap options

# Build-dependent auth types: PgBouncer only knows them when compiled with the library.
BUILD_DEPENDENT_AUTH = {"pam": "--with-pam", "ldap": "--with-ldap"}


def table_version(text: str) -> Version:
    """'1.18' or '1.18.0' -> (1, 18): the patch level never changes the parameter table."""
    return parse_version(text, exact=True, min_parts=2)[:2]
