"""The peer exporters' start-up spellings, read as the peers read them, so a unit file or
a Helm values file moves over by changing the binary's name.

postgres_exporter: `DATA_SOURCE_NAME` (a comma-separated list of DSNs: URIs or libpq
key=value strings), else `DATA_SOURCE_URI` (`host:port/db?params`, no user) with
`DATA_SOURCE_USER` and `DATA_SOURCE_PASS`; each of the last three also as `..._FILE` (the
file wins over the variable, its text trimmed). `--extend.query-path`,
`--auto-discover-databases` with `--exclude-databases`/`--include-databases`,
`--disable-default-metrics`, `--disable-settings-metrics`, `--constantLabels`,
`--metric-prefix` (`pg` only) and `--web.telemetry-path`, or their `PG_EXPORTER_*`
variables (the flag wins); `--config.file` (postgres_exporter.yml: the `auth_modules`
/probe uses); `--[no-]collector.NAME`.

mysqld_exporter: `--config.my-cnf`, `--mysqld.address` (host:port or unix:///path,
localhost:3306 by default), `--mysqld.username` and `MYSQLD_EXPORTER_PASSWORD`, which fill
what the my.cnf's [client] leaves out; `--exporter.lock_wait_timeout`,
`--exporter.log_slow_filter`, `--timeout-offset`, `--tls.insecure-skip-verify`;
`--[no-]collect.NAME`. Up to 0.14 (Debian's), its
`DATA_SOURCE_NAME` held one Go MySQL DSN (`user:password@(host:3306)/`,
`user@unix(/run/mysqld/mysqld.sock)/`), which won over the my.cnf: such a value is
mysqld_exporter's, not postgres_exporter's (a libpq DSN never has that shape).

Both: `--log.level`, `--log.format`. This module reads the command line and the
environment only; the files they name are read when the config loads, on start and on
every SIGHUP (`toolkit.peers.targets`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.mycnf import is_port
from dbgauge.toolkit.peers.collectors import Switches, parse_switches
from dbgauge.toolkit.redact import register_secret

MYSQLD_PASSWORD_ENV = "MYSQLD_EXPORTER_PASSWORD"
DEFAULT_MYSQLD_ADDRESS = "localhost:3306"
# Paths the daemon serves itself: --web.telemetry-path cannot take one.
OWN_PATHS = ("/probe", "/healthz", "/status.json", "/-/reload")
_PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,200}")
_TRUE = ("1", "t", "true")  # Go's strconv.ParseBool, which kingpin reads variables with
_FALSE = ("0", "f", "false")

# --auto-discover-databases (postgres_exporter): the collector_options it sets on the
# postgres targets the peer's spellings make and on /probe's: the per-table collector and
# the queries.yaml read every connectable database (`databases: all`).
AUTO_DISCOVER_DATABASES: Mapping[str, Mapping[str, object]] = {
    "postgres_tables": {"databases": "all"}, "postgres_queries": {"databases": "all"}}


@dataclass(frozen=True)
class Setting:
    """One of postgres_exporter's VAR / VAR_FILE pairs: the file, when named, wins (read
    when the config loads, trimmed)."""

    var: str
    value: str | None = field(default=None, repr=False)
    file: Path | None = None


@dataclass(frozen=True)
class PostgresStartup:
    """What postgres_exporter's spellings asked for."""

    dsns: tuple[str, ...] = field(default=(), repr=False)  # DATA_SOURCE_NAME
    uri: Setting | None = None  # DATA_SOURCE_URI(_FILE)
    user: Setting | None = None
    password: Setting | None = None
    query_path: str | None = None
    auto_discover: bool = False
    auth_file: Path | None = None  # --config.file: auth_modules for /probe
    switches: Switches | None = None
    disable_default: bool = False  # --disable-default-metrics
    disable_settings: bool = False  # --disable-settings-metrics
    labels: Mapping[str, str] = field(default_factory=dict)  # --constantLabels
    exclude_databases: tuple[str, ...] = ()  # with --auto-discover-databases only
    include_databases: tuple[str, ...] = ()


@dataclass(frozen=True)
class MysqlStartup:
    """What mysqld_exporter's spellings asked for: the my.cnf, and the [client] settings
    its flags and MYSQLD_EXPORTER_PASSWORD give where the file gives none."""

    my_cnf: Path | None = None
    host: str = "localhost"
    port: str = "3306"
    socket: str = ""
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    switches: Switches | None = None
    # mysqld_exporter 0.14's DATA_SOURCE_NAME (a Go DSN): the `mysql` target's
    # user, password, host, port or socket, instead of [client]'s
    dsn: Mapping[str, str] | None = field(default=None, repr=False)
    lock_wait_timeout: float | None = None  # --exporter.lock_wait_timeout
    log_slow_filter: bool = False  # --exporter.log_slow_filter
    skip_verify: bool = False  # --tls.insecure-skip-verify


@dataclass(frozen=True)
class PeerStartup:
    """Every peer spelling of one `serve` command line and its environment."""

    mysql: MysqlStartup | None = None
    postgres: PostgresStartup | None = None
    telemetry_path: str = "/metrics"
    log_level: str | None = None  # dbgauge's names: debug, info, warning, error
    log_format: str | None = None  # text or json
    timeout_offset: float | None = None  # mysqld_exporter's --timeout-offset
    notes: tuple[str, ...] = ()  # flags accepted that change nothing, and why

    def warnings(self) -> list[str]:
        """What was asked that dbgauge does not do (logged once the daemon logs)."""
        out = list(self.notes)
        for peer in (self.mysql, self.postgres):
            if peer is not None and peer.switches is not None:
                out += peer.switches.warnings()
        return out


@dataclass(frozen=True)
class PeerFlags:
    """The peer flags `serve` was given (None: not given); `switches`, by peer, what the
    command line's --[no-]collect.NAME and --[no-]collector.NAME switched
    (`toolkit.peers.collectors.parse_switches`)."""

    my_cnf: str | None = None
    mysqld_address: str | None = None
    mysqld_username: str | None = None
    telemetry_path: str | None = None
    query_path: str | None = None
    auto_discover: bool | None = None
    auth_file: str | None = None
    log_level: str | None = None
    log_format: str | None = None
    switches: Mapping[str, Switches] | None = None
    # postgres_exporter's
    disable_default_metrics: bool | None = None
    disable_settings_metrics: bool | None = None
    constant_labels: str | None = None
    exclude_databases: str | None = None
    include_databases: str | None = None
    metric_prefix: str | None = None
    # mysqld_exporter's
    lock_wait_timeout: str | None = None
    log_slow_filter: bool | None = None
    timeout_offset: str | None = None
    tls_insecure_skip_verify: bool | None = None


def read_startup(flags: PeerFlags, env: Mapping[str, str]) -> PeerStartup:
    """The peer spellings of a command line and environment; ConfigError on what the
    peer would refuse, or what is ambiguous (DATA_SOURCE_NAME with DATA_SOURCE_URI)."""
    switches = flags.switches or parse_switches(())
    go_dsn = go_mysql_dsn(env.get("DATA_SOURCE_NAME") or "")
    if go_dsn is not None:  # mysqld_exporter 0.14's, not postgres_exporter's
        env = {k: v for k, v in env.items() if k != "DATA_SOURCE_NAME"}
    postgres = _postgres(flags, env, switches["postgres_exporter"])
    telemetry = flags.telemetry_path if postgres is None else \
        _given(flags.telemetry_path, env, "PG_EXPORTER_WEB_TELEMETRY_PATH")
    mysql = _mysql(flags, env, switches["mysqld_exporter"], go_dsn)
    _metric_prefix(flags, env)
    return PeerStartup(
        mysql=mysql, postgres=postgres,
        telemetry_path=telemetry_path(telemetry) if telemetry is not None else "/metrics",
        log_level=_choice("--log.level", flags.log_level, {
            "debug": "debug", "info": "info", "warn": "warning", "error": "error"}),
        log_format=_choice("--log.format", flags.log_format, {"logfmt": "text",
                                                              "json": "json"}),
        timeout_offset=_seconds("--timeout-offset", flags.timeout_offset, 0.0, 60.0),
        notes=_notes(postgres))


def telemetry_path(value: str) -> str:
    """--web.telemetry-path: where /metrics is served instead."""
    if not _PATH.fullmatch(value):
        raise ConfigError(f"--web.telemetry-path {value[:40]!r}: a URL path starting with / "
                          "(e.g. /metrics), without spaces, ? or #")
    if value in OWN_PATHS:
        raise ConfigError(f"--web.telemetry-path {value}: dbgauge serves "
                          f"{', '.join(OWN_PATHS)} itself; choose another path")
    return value


def _choice(flag: str, value: str | None, names: Mapping[str, str]) -> str | None:
    if value is None:
        return None
    if value not in names:
        raise ConfigError(f"{flag} {value[:20]!r}: one of {', '.join(names)}")
    return names[value]


def _env(env: Mapping[str, str], name: str) -> str | None:
    """A variable as Go's os.Getenv sees it: empty is unset."""
    return env.get(name) or None


def _setting(env: Mapping[str, str], var: str) -> Setting | None:
    value, file = _env(env, var), _env(env, f"{var}_FILE")
    if value is None and file is None:
        return None
    return Setting(var, value, Path(file) if file is not None else None)


def _postgres(flags: PeerFlags, env: Mapping[str, str],
              switches: Switches) -> PostgresStartup | None:
    """postgres_exporter's spellings, or None when there is none."""
    name = _env(env, "DATA_SOURCE_NAME")
    uri, user, password = (_setting(env, v) for v in
                           ("DATA_SOURCE_URI", "DATA_SOURCE_USER", "DATA_SOURCE_PASS"))
    if name is not None and uri is not None:
        raise ConfigError("both DATA_SOURCE_NAME and DATA_SOURCE_URI are set: keep one "
                          "(postgres_exporter would silently use DATA_SOURCE_NAME)")
    for extra in (user, password):
        if extra is not None and uri is None:
            raise ConfigError(f"{extra.var}{'_FILE' if extra.file else ''} is set without "
                              f"DATA_SOURCE_URI: it goes with DATA_SOURCE_URI only "
                              f"({'DATA_SOURCE_NAME carries its own' if name else 'set it'})")
    dsns = _split_dsns(name) if name is not None else ()
    auth = Path(flags.auth_file) if flags.auth_file is not None else None
    if not (dsns or uri or auth):
        given = [f for f, v in (("--extend.query-path", flags.query_path),
                                ("--auto-discover-databases", flags.auto_discover),
                                ("--disable-default-metrics", flags.disable_default_metrics),
                                ("--disable-settings-metrics", flags.disable_settings_metrics),
                                ("--constantLabels", flags.constant_labels),
                                ("--exclude-databases", flags.exclude_databases),
                                ("--include-databases", flags.include_databases),
                                ("--collector.*", switches or None)) if v is not None]
        if given:
            raise ConfigError(f"{given[0]} applies to the postgres targets DATA_SOURCE_NAME "
                              "or DATA_SOURCE_URI make, and to /probe with --config.file: set "
                              "one (for --config's targets, use collector_options)")
        return None
    discover = _flag_or_env(flags.auto_discover, env, "PG_EXPORTER_AUTO_DISCOVER_DATABASES")
    query_path = _given(flags.query_path, env, "PG_EXPORTER_EXTEND_QUERY_PATH")
    return PostgresStartup(
        dsns, uri, user, password, query_path, discover, auth, switches,
        disable_default=_flag_or_env(flags.disable_default_metrics, env,
                                     "PG_EXPORTER_DISABLE_DEFAULT_METRICS"),
        disable_settings=_flag_or_env(flags.disable_settings_metrics, env,
                                      "PG_EXPORTER_DISABLE_SETTINGS_METRICS"),
        labels=constant_labels(_given(flags.constant_labels, env,
                                      "PG_EXPORTER_CONSTANT_LABELS") or ""),
        exclude_databases=_names(_given(flags.exclude_databases, env,
                                        "PG_EXPORTER_EXCLUDE_DATABASES")),
        include_databases=_names(_given(flags.include_databases, env,
                                        "PG_EXPORTER_INCLUDE_DATABASES")))


def _given(flag: str | None, env: Mapping[str, str], var: str) -> str | None:
    """A postgres_exporter string flag or, when not given, its variable (the flag wins,
    as kingpin reads them)."""
    return flag if flag is not None else _env(env, var)


def _flag_or_env(flag: bool | None, env: Mapping[str, str], var: str) -> bool:
    return flag if flag is not None else _bool_env(env, var)


def _names(value: str | None) -> tuple[str, ...]:
    """--exclude-databases / --include-databases: comma-separated database names."""
    return tuple(n.strip() for n in (value or "").split(",") if n.strip())


def constant_labels(value: str) -> dict[str, str]:
    """--constantLabels: `name=value` pairs separated by commas, spaces around each
    trimmed, as postgres_exporter reads them; a pair without exactly one `=` or with an
    empty side is refused (the peer logs it and drops it, which hides the typo)."""
    labels: dict[str, str] = {}
    for part in (p.strip() for p in value.split(",") if p.strip()):
        pair = [x.strip() for x in part.split("=")]
        if len(pair) != 2 or not all(pair):
            raise ConfigError(f"--constantLabels: {part[:60]!r} is not name=value (pairs are "
                              "separated by commas: env=prod,dc=eu1)")
        labels[pair[0]] = pair[1]
    return labels


def _metric_prefix(flags: PeerFlags, env: Mapping[str, str]) -> None:
    """--metric-prefix: only postgres_exporter's default `pg` is taken. With any other
    prefix the peer also renames the views its built-in queries read (`xx_stat_database`),
    so its own built-in families fail; dbgauge refuses it rather than guess."""
    prefix = _given(flags.metric_prefix, env, "PG_EXPORTER_METRIC_PREFIX")
    if prefix is not None and prefix != "pg":
        raise ConfigError(f"--metric-prefix {prefix[:20]!r}: only pg is supported (the peer's "
                          "built-in queries fail with any other prefix); rename series with "
                          "Prometheus' metric_relabel_configs instead")


def _seconds(flag: str, value: str | None, low: float, high: float) -> float | None:
    """A number of seconds a Go flag takes (`2`, `0.25`), between `low` and `high`."""
    if value is None:
        return None
    try:
        seconds = float(value) if len(value) <= 20 else float("nan")
    except ValueError:
        seconds = float("nan")
    if not low <= seconds <= high:  # NaN fails too
        raise ConfigError(f"{flag} {value[:20]!r}: a number of seconds from {low:g} to "
                          f"{high:g}")
    return seconds


def _notes(postgres: PostgresStartup | None) -> tuple[str, ...]:
    """What was asked that changes nothing here, as the peer would ignore it too."""
    out: list[str] = []
    if postgres is not None and not postgres.auto_discover:
        out += [f"{flag} applies with --auto-discover-databases only (as for "
                "postgres_exporter): ignored"
                for flag, given in (("--exclude-databases", postgres.exclude_databases),
                                    ("--include-databases", postgres.include_databases))
                if given]
    return tuple(out)


def _split_dsns(value: str) -> tuple[str, ...]:
    """DATA_SOURCE_NAME: DSNs separated by commas (postgres_exporter splits on every
    comma); an empty one is refused, as postgres_exporter refuses it."""
    dsns = tuple(d.strip() for d in value.split(","))
    for i, dsn in enumerate(dsns, start=1):
        if not dsn:
            raise ConfigError(f"DATA_SOURCE_NAME: DSN {i} of {len(dsns)} is empty (DSNs are "
                              "separated by commas)")
    return dsns


def _bool_env(env: Mapping[str, str], name: str) -> bool:
    value = (_env(env, name) or "false").lower()
    if value not in _TRUE + _FALSE:
        raise ConfigError(f"{name}={value[:20]!r}: true or false")
    return value in _TRUE


def _mysql(flags: PeerFlags, env: Mapping[str, str], switches: Switches,
           go_dsn: Mapping[str, str] | None) -> MysqlStartup | None:
    """mysqld_exporter's spellings, or None when there is none (MYSQLD_EXPORTER_PASSWORD
    alone makes no target: it fills in a password only)."""
    if flags.my_cnf is None and flags.mysqld_address is None and flags.mysqld_username is None \
            and go_dsn is None:
        given = [f for f, v in (("--collect.*", bool(switches)),
                                ("--exporter.lock_wait_timeout", flags.lock_wait_timeout),
                                ("--exporter.log_slow_filter", flags.log_slow_filter),
                                ("--tls.insecure-skip-verify", flags.tls_insecure_skip_verify))
                 if v]
        if given:
            raise ConfigError(f"{given[0]} applies to the mysql target --config.my-cnf or "
                              "--mysqld.address make: give one (for --config's targets, "
                              "list collectors:, set lock_timeout)")
        return None
    host, port, socket = mysqld_address(flags.mysqld_address or DEFAULT_MYSQLD_ADDRESS)
    password = _env(env, MYSQLD_PASSWORD_ENV)
    register_secret(password)
    return MysqlStartup(Path(flags.my_cnf) if flags.my_cnf is not None else None, host, port,
                        socket, flags.mysqld_username or None, password, switches, go_dsn,
                        lock_wait_timeout=_seconds("--exporter.lock_wait_timeout",
                                                   flags.lock_wait_timeout, 1, 31536000),
                        log_slow_filter=bool(flags.log_slow_filter),
                        skip_verify=bool(flags.tls_insecure_skip_verify))


_GO_DSN = re.compile(r"(?:(?P<auth>.*)@)?(?P<net>[a-z]*)(?:\((?P<addr>[^()]*)\))?")


def go_mysql_dsn(value: str) -> dict[str, str] | None:
    """mysqld_exporter 0.14's DATA_SOURCE_NAME, read as go-sql-driver/mysql reads it
    (`[user[:password]@][net[(address)]]/dbname[?params]`: the last `/` ends the address,
    the last `@` before it the credentials, the first `:` the user): its user, password,
    host and port, or socket; None when `value` does not have that shape."""
    head, slash, tail = value.rpartition("/")
    if not slash or "://" in value or re.match(r"\s*[A-Za-z_]+\s*=", value) \
            or not (head == "" or head.endswith((")", "@"))):
        return None
    if "?" in tail:  # tls=... among them: never dropped silently
        raise ConfigError("DATA_SOURCE_NAME: dbgauge does not read a Go MySQL DSN's "
                          "parameters (?tls=...): put ssl-ca under [client] of a "
                          "--config.my-cnf instead")
    m = _GO_DSN.fullmatch(head)
    if m is None or m.group("net") not in ("", "tcp", "unix"):
        raise ConfigError("DATA_SOURCE_NAME: not a MySQL DSN mysqld_exporter 0.14 reads "
                          "(user:password@(host:3306)/ or user@unix(/path/mysqld.sock)/)")
    user, _, password = (m.group("auth") or "").partition(":")
    register_secret(password)
    out = {"user": user, "password": password}
    address = m.group("addr") or ""
    if m.group("net") == "unix":
        out["socket"] = address or "/tmp/mysql.sock"
        return out
    host, port, _ = mysqld_address(address or "127.0.0.1:3306", "DATA_SOURCE_NAME's address")
    return {**out, "host": host, "port": port}


def mysqld_address(value: str, what: str = "--mysqld.address") -> tuple[str, str, str]:
    """(host, port, socket) of mysqld_exporter's address: host:port, [v6]:port or
    unix:///path/to/socket (a port is required, as Go's net.SplitHostPort requires it)."""
    if value.startswith("unix://"):
        socket = value[len("unix://"):]
        if not socket.startswith("/"):
            raise ConfigError(f"{what} {value[:60]!r}: unix:// takes an absolute socket path "
                              "(unix:///run/mysqld/mysqld.sock)")
        return "localhost", "3306", socket
    host, sep, port = value.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        sep = ""  # an IPv6 address without brackets is ambiguous, as in Go
    if not sep or "/" in host or "@" in host or not is_port(port):
        raise ConfigError(f"{what} {value[:60]!r}: not host:port ({DEFAULT_MYSQLD_ADDRESS}, "
                          "[::1]:3306) or unix:///path/to/mysqld.sock")
    return host or "127.0.0.1", port, ""
