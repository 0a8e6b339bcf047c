"""Connections to targets: the only code that imports PyMySQL or psycopg.

Every connection identifies its server (flavor and version) once, applies server-side
timeouts to the session, and exposes one small interface to collectors: run a named
statement from `sql/` (or literal SQL) and get rows as dicts. `abort()` may be called
from another thread to unblock a query that outlived the scrape deadline.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterable

from dbgauge.toolkit.db.base import Connection, Row, ServerInfo
from dbgauge.toolkit.dsn import ConnParams, parse_dsn
from dbgauge.toolkit.redact import register_secret
from dbgauge.toolkit.targets import Target

__all__ = ["Connection", "Row", "ServerInfo", "connect", "connect_dsn", "load_drivers"]


def connect(target: Target, connect_timeout: float | None = None, *,
            session_timeouts: bool = True) -> Connection:
    """Open a connection for `target`, with session timeouts applied (PostgreSQL, without
    `session_timeouts`: none, for a check that reads the session's settings as a plain
    client's session has them, as check_postgres' settings_checksum).

    Raises ConnectError/AuthError with a message naming the target's address, never its
    password.
    """
    timeout = target.connect_timeout if connect_timeout is None else connect_timeout
    conn = _open(target.connection_params(), target.kind, timeout, target.query_timeout,
                 target.lock_timeout, session_timeouts=session_timeouts)
    conn.target = target
    return conn


def connect_dsn(dsn: str, *, password: str | None = None, kind: str | None = None,
                connect_timeout: float = 5.0, query_timeout: float = 30.0,
                lock_timeout: float = 5.0, client_binding: bool = False,
                application_name: str = "dbgauge") -> Connection:
    """Open a connection from a DSN given on the command line or by the sandbox.

    `kind` defaults from the scheme; a postgresql:// DSN to the database `pgbouncer` is
    PgBouncer's admin console. `password` is for a DSN that carries none (the DSN's own
    password wins, as everywhere on the command line). PostgreSQL only:
    `client_binding` binds parameters on the client, as for PgBouncer's console, so
    utility statements that take no server-side parameters (CREATE ROLE ... PASSWORD %s)
    can still get their values bound rather than formatted in; `application_name` is
    what pg_stat_activity shows.
    """
    params = parse_dsn(dsn).or_password(password)
    register_secret(params.password)
    return _open(params, kind or params.kind, connect_timeout, query_timeout, lock_timeout,
                 client_binding=client_binding, application_name=application_name)


def load_drivers(kinds: Iterable[str]) -> None:
    """Import the drivers for these target kinds now. `_open` imports a driver on first
    use (a one-shot check loads only its own); a daemon loads them before its first
    scrape, so no scrape thread imports a driver half-way while another uses it, nor
    imports one when the process has no file descriptor left to read it with."""
    for kind in set(kinds):
        importlib.import_module("dbgauge.toolkit.db." + ("mysql" if kind == "mysql"
                                                         else "postgres"))


def _open(params: ConnParams, kind: str, connect_timeout: float, query_timeout: float,
          lock_timeout: float, *, client_binding: bool = False,
          application_name: str = "dbgauge", session_timeouts: bool = True) -> Connection:
    started = time.monotonic()
    conn: Connection
    if kind == "mysql":
        from dbgauge.toolkit.db.mysql import MySQLConnection

        conn = MySQLConnection.open(params, connect_timeout, query_timeout, lock_timeout)
    else:
        from dbgauge.toolkit.db.postgres import PostgresConnection

        conn = PostgresConnection.open(params, connect_timeout, query_timeout, lock_timeout,
                                       pgbouncer=kind == "pgbouncer",
                                       client_binding=client_binding,
                                       application_name=application_name,
                                       session_timeouts=session_timeouts)
    # handshake, authentication and the identification query: what a client waits for
    conn.connect_seconds = time.monotonic() - started
    return conn
