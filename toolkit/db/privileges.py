"""What a MySQL/MariaDB statement needs to be allowed, named in the error when it is not.

A monitoring account usually lacks one privilege or another; the useful error says which
GRANT fixes it. Access-denied errors are recognised by their server error number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbgauge.toolkit.db.base import Connection, Row
from dbgauge.toolkit.errors import DbgaugeError, QueryError
from dbgauge.toolkit.sql import quote_ident

# 1227 needs a global privilege, 1142/1143 table/column denied, 1044 database denied,
# 1370 routine denied.
DENIED = frozenset({1227, 1142, 1143, 1044, 1370})

# What each statement needs, per flavor; named in the error so the log line says what to grant.
PROCESS = {"mysql": "the PROCESS privilege (GRANT PROCESS ON *.* TO ...)",
           "mariadb": "the PROCESS privilege (GRANT PROCESS ON *.* TO ...)"}
REPLICA_MONITOR = {
    "mysql": "the REPLICATION CLIENT privilege (GRANT REPLICATION CLIENT ON *.* TO ...)",
    "mariadb": "the SLAVE MONITOR privilege (GRANT SLAVE MONITOR ON *.* TO ...)",
}
PS_SELECT = {
    "mysql": "SELECT on performance_schema (GRANT SELECT ON performance_schema.* TO ...)",
    "mariadb": "SELECT on performance_schema (GRANT SELECT ON performance_schema.* TO ...)",
}


# A MySQL/MariaDB statement on the processlist (information_schema.PROCESSLIST, MySQL's
# performance_schema.processlist) is not refused without PROCESS: it answers with the
# account's own threads only, so "0 connected replicas" or "1 thread" would be read as the
# server's. Whether the session holds PROCESS is asked of the server itself, by a statement
# it refuses without it (`has_process`): information_schema.USER_PRIVILEGES lists the
# account's own grants and leaves out what an enabled role gives (a role holding PROCESS,
# SET DEFAULT ROLE: USAGE there), SHOW GRANTS would need its text parsed (roles, nested
# roles, MySQL's partial revokes), and the server's own check needs neither. A behavioural
# probe of the processlist itself (does it show a thread of another user?) cannot tell an
# idle server from a hidden one.
PROCESSLIST_HIDES = "without it the server shows only the account's own threads"


def denied(exc: QueryError) -> bool:
    """True when the server refused the statement for lack of a privilege."""
    return exc.errno in DENIED


def query(conn: Connection, name: str, needs: Mapping[str, str] | str, params: Any = None,
          sql: str | None = None) -> list[Row]:
    """Run the named statement (or `sql`, text dbgauge filled in itself, labelled `name`);
    an access-denied error names the privilege to grant."""
    try:
        return conn.query(name, params) if sql is None else conn.execute_sql(sql, params)
    except QueryError as exc:
        if not denied(exc):
            raise
        what = needs if isinstance(needs, str) else needs.get(conn.server.flavor, "")
        raise exc.again(f"{name} needs {what}: {exc}") from None


def has_process(conn: Connection) -> bool:
    """Whether the session holds PROCESS (its own or an enabled role's), by the server's own
    check: see PROCESSLIST_HIDES above."""
    try:
        conn.query("process_probe")
    except QueryError as exc:
        if not denied(exc):
            raise
        return False
    return True


def process_hidden(conn: Connection, name: str) -> str:
    """"" when the session holds PROCESS, else the one line saying that `name` would read
    the account's own threads only, and the grant to run."""
    if has_process(conn):
        return ""
    return f"{name} needs {PROCESS.get(conn.server.flavor, PROCESS['mysql'])}: " \
           f"{PROCESSLIST_HIDES}"


def require_process(conn: Connection, name: str) -> None:
    """Raise the access-denied error naming PROCESS when the session lacks it: `name` reads
    the processlist, which would otherwise answer with the account's own threads."""
    if why := process_hidden(conn, name):
        raise QueryError(why, errno=1227)


# ----------------------------------------------------------------- PostgreSQL
# PostgreSQL does not refuse most monitoring reads: it answers them with what the role may
# see. Another role's session in pg_stat_activity reads `<insufficient privilege>` with
# NULL state and times; a walsender or WAL receiver shows its pid and NULL for the rest;
# superuser-only settings are left out. The statements that read those views count what
# is hidden, and the collector or check then says so with the grant below, rather than
# report a count or an age of what it could see as the server's.
# pg_monitor holds pg_read_all_stats, pg_read_all_settings and pg_stat_scan_tables: it is
# the documented minimum (docs/postgres.md); the role named is the one that would do.
PG_READ_ALL_STATS = "pg_read_all_stats"
PG_READ_ALL_SETTINGS = "pg_read_all_settings"
PG_MONITOR = "pg_monitor"
# What a PostgreSQL "permission denied" names, when pg_monitor grants it (a function of
# the server's, a superuser-only setting); a user table's denial is not ours to fix.
# ("member of pg_read_all...": 13's wording of 15's "privileges of pg_read_all..."; 18 says
# only "permission denied to examine" a setting, which pg_read_all_settings lets it read)
_PG_MONITOR_FIXES = ("function pg_", "privileges of pg_read_all", "member of pg_read_all",
                     "permission denied to examine", "pg_monitor")


def pg_grant(user: str, role: str = PG_MONITOR) -> str:
    """The statement that lets `user` see what `role` shows."""
    try:
        who = quote_ident(user, "postgres") if user else "..."
    except DbgaugeError:  # a name the helper will not quote: the operator fills it in
        who = "..."
    grant = f"GRANT {PG_MONITOR} TO {who}"
    return grant if role == PG_MONITOR else f"{grant} (or at least {role})"


def pg_cannot_see(what: str, user: str, role: str = PG_READ_ALL_STATS) -> str:
    """The one line a collector fails with and a check's UNKNOWN says."""
    return f"the role {user or 'dbgauge connects as'} cannot see {what}: {pg_grant(user, role)}"


def pg_denied_hint(sqlstate: str | None, message: str, user: str) -> str:
    """What to add to a PostgreSQL permission-denied error pg_monitor fixes ("" else)."""
    if sqlstate != "42501" or not any(m in message for m in _PG_MONITOR_FIXES):
        return ""
    return f"; {pg_grant(user)}"
