"""The monitoring plugins' check_mysql, check_mysql_query and check_pgsql (2.3.3, Debian's
monitoring-plugins-standard): every option of each and what dbgauge offers for it. The
table in docs/checks.md is made from this (`docs`), and a unit test holds every named
check to the registry and every option of the plugins' --help to a row here. Data only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PluginOption:
    """One option of a plugin (`(none)`: the plugin run without options; `(result)`: how it
    judges a query that measured nothing): the dbgauge check(s) doing its job and the
    option there, whether fully ("yes"), in part ("partly") or not ("no"), and what
    differs or why not."""

    plugin: str
    option: str
    checks: tuple[str, ...]
    provided: str
    dbgauge: str = ""  # the option in dbgauge ("" none, or the same meaning needs none)
    note: str = ""


def _o(plugin: str, option: str, checks: str, provided: str, dbgauge: str = "",
       note: str = "") -> PluginOption:
    return PluginOption(plugin, option, tuple(checks.split()), provided, dbgauge, note)


_DSN_MYSQL = "in the --node DSN: mysql://USER@HOST:PORT/DATABASE"
_PASSWORD = ("--password-env VAR, --password-file FILE, or the DSN: on the command line a "
             "password shows in the process table (the plugins warn so too)")
_NOT_SAID = "UNKNOWN: the query measured nothing"


def _mysql_connection(plugin: str, check: str) -> tuple[PluginOption, ...]:
    """The connection options check_mysql and check_mysql_query share."""
    return (
        _o(plugin, "-H, --hostname", check, "yes", "--node", _DSN_MYSQL),
        _o(plugin, "-P, --port", check, "yes", "--node", _DSN_MYSQL + " (default 3306)"),
        _o(plugin, "-s, --socket", check, "yes", "--node", "mysql://USER@/?unix_socket=PATH"),
        _o(plugin, "-d, --database", check, "yes", "--node", _DSN_MYSQL),
        _o(plugin, "-u, --username", check, "yes", "--node", _DSN_MYSQL),
        _o(plugin, "-p, --password", check, "partly", "--password-env", _PASSWORD),
        _o(plugin, "-f, --file", check, "yes", "-f, --defaults-file", "read instead of "
           "/etc/my.cnf and ~/.my.cnf; its port is used (the plugin connects to 3306 "
           "unless -P says otherwise)"),
        _o(plugin, "-g, --group", check, "yes", "-g, --defaults-group", "[GROUP] read "
           "beside [client], [client-server] and [client-mariadb]"),
        _o(plugin, "--extra-opts", "", "no", "", "the plugins' ini file of options: "
           "dbgauge's --config YAML names targets instead"),
    )


CHECK_MYSQL: tuple[PluginOption, ...] = (
    _o("check_mysql", "(none)", "connection", "yes", "", "down or password refused is "
       "CRITICAL in both; dbgauge also holds the seconds to connect against -w/-c "
       "(defaults 2 and 8 s; check_mysql has no such threshold), and leaves SHOW STATUS "
       "counters (Uptime, Questions...) to the exporter instead of perfdata"),
    *_mysql_connection("check_mysql", "connection"),
    _o("check_mysql", "-n, --ignore-auth", "connection", "yes", "-n, --ignore-auth",
       "a refused password is OK: the server answered. On connection only: dbgauge's "
       "lag cannot measure a replica it cannot log in to (check_mysql -n -S says OK)"),
    _o("check_mysql", "-S, --check-slave", "lag", "yes", "-S, --replica", "a stopped SQL "
       "or I/O thread is CRITICAL, no replication channel a WARNING (\"No slaves "
       "defined\"), as there; without -S such a node is OK in dbgauge (no lag)"),
    _o("check_mysql", "-w, --warning", "lag", "yes", "-w", "with -S: a range of seconds "
       "behind the source, as there. dbgauge's lag has defaults (30 s), check_mysql "
       "none; a target with a heartbeat is judged by its age; threads running with "
       "Seconds_Behind_Master NULL are CRITICAL (check_mysql: OK)"),
    _o("check_mysql", "-c, --critical", "lag", "yes", "-c", "as -w (default 120 s)"),
    _o("check_mysql", "-l, --ssl", "", "no", "", "TLS comes from the option file or the "
       "server's require_secure_transport"),
    _o("check_mysql", "-C, --ca-cert", "connection lag", "yes", "--node",
       "mysql://...?ssl_ca=FILE, or ssl-ca in the option file"),
    _o("check_mysql", "-a, --cert", "", "no", "", "client certificates are not provided"),
    _o("check_mysql", "-k, --key", "", "no", "", "client certificates are not provided"),
    _o("check_mysql", "-D, --ca-dir", "", "no", "", "a CA file (ssl_ca) only"),
    _o("check_mysql", "-L, --ciphers", "", "no", "", "the driver's cipher list"),
    _o("check_mysql", "(no -t)", "connection lag", "yes", "-t, --timeout", "check_mysql "
       "has no timeout and waits on a server that never answers; dbgauge says UNKNOWN "
       "after -t (default 10 s)"),
)

CHECK_MYSQL_QUERY: tuple[PluginOption, ...] = (
    _o("check_mysql_query", "-q, --query", "custom-query", "yes", "-q, --query", "a "
       "column `result`, else the first column, as there; every row is judged (the "
       "largest), not only the first; read-only (one statement, a READ ONLY transaction "
       "rolled back, at most 1000 rows)"),
    _o("check_mysql_query", "-w, --warning", "custom-query", "yes", "-w",
       "a range, as there; no default in either"),
    _o("check_mysql_query", "-c, --critical", "custom-query", "yes", "-c",
       "a range, as there; no default in either"),
    _o("check_mysql_query", "(result)", "custom-query", "partly", "", _NOT_SAID + " "
       "(check_mysql_query: WARNING for no row, CRITICAL for no number or a failed query)"),
    *_mysql_connection("check_mysql_query", "custom-query"),
)

CHECK_PGSQL: tuple[PluginOption, ...] = (
    _o("check_pgsql", "(none)", "connection", "yes", "", "connected or not (down is "
       "CRITICAL), the seconds it took as perfdata `connect_seconds` (check_pgsql: `time`)"),
    _o("check_pgsql", "-H, --hostname", "connection", "yes", "--node",
       "postgresql://USER@HOST:PORT/DATABASE, or libpq's key=value form"),
    _o("check_pgsql", "-P, --port", "connection", "yes", "--node", "in the DSN"),
    _o("check_pgsql", "-d, --database", "connection", "yes", "--node", "in the DSN "
       "(check_pgsql's default is template1, libpq's the user name)"),
    _o("check_pgsql", "-l, --logname", "connection", "yes", "--node", "in the DSN"),
    _o("check_pgsql", "-p, --password", "connection", "partly", "--password-env",
       _PASSWORD + "; PGPASSWORD and ~/.pgpass are read by both"),
    _o("check_pgsql", "-o, --option", "connection", "yes", "--node", "libpq's "
       "key=value DSN (`--node 'host=db1 sslmode=require'`) or a URI's ?sslmode="),
    _o("check_pgsql", "-w, --warning", "connection", "yes", "-w", "seconds to connect "
       "(default 2, as there); a range"),
    _o("check_pgsql", "-c, --critical", "connection", "yes", "-c", "seconds to connect "
       "(default 8, as there); a range"),
    _o("check_pgsql", "-t, --timeout", "connection", "partly", "-t, --timeout", "a node "
       "without a result by then is UNKNOWN, as the plugin guidelines say (check_pgsql: "
       "CRITICAL \"Plugin timed out\")"),
    _o("check_pgsql", "-q, --query", "connection", "yes", "-q, --query", "its first "
       "column of the first row, judged beside the connection time (the worse wins), "
       "perfdata `query`; read-only"),
    _o("check_pgsql", "--queryname", "connection", "yes", "--queryname"),
    _o("check_pgsql", "-W, --query-warning", "connection", "yes", "-W, --query-warning",
       "a range, as there"),
    _o("check_pgsql", "-C, --query-critical", "connection", "yes", "-C, --query-critical",
       "a range, as there"),
    _o("check_pgsql", "(result)", "connection", "partly", "", _NOT_SAID + " (check_pgsql:"
       " WARNING for no row, CRITICAL for no number or a failed query)"),
    _o("check_pgsql", "-v, --verbose", "connection", "yes", "-v", "-v, -vv, -vvv"),
    _o("check_pgsql", "--extra-opts", "", "no", "", "the plugins' ini file of options: "
       "dbgauge's --config YAML names targets instead"),
)

PLUGINS: tuple[PluginOption, ...] = CHECK_MYSQL + CHECK_MYSQL_QUERY + CHECK_PGSQL
