"""Connections to targets: the only code that imports PyMySQL or psycopg.

Every connection identifies its server (flavor and version) once, applies server-side
timeouts to the session, and exposes one small interface to collectors: run a named
statement from `sql/` (or literal SQL) and get rows as dicts. `abort()` may be called
from another thread to unblock a query that outlived the scrape deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from toolkit.dsn import ConnParams
from toolkit.sql import Version

Row = dict[str, Any]


@dataclass(frozen=True)
class ServerInfo:
    """What a connection talks to: flavor is mysql, mariadb, postgres or pgbouncer."""

    flavor: str
    version: Version
    version_string: str

    @property
    def version_text(self) -> str:
        return ".".join(str(p) for p in self.version)


class ConnectTarget(Protocol):
    """What `connect` needs of a target: a configured one (TargetConfig) or a DSN given on
    the command line (toolkit.dsn.Endpoint)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def connect_timeout(self) -> float: ...
    @property
    def query_timeout(self) -> float: ...
    @property
    def lock_timeout(self) -> float: ...

    def connection_params(self) -> ConnParams: ...


class Connection(Protocol):
    """What collectors and checks may do with a target."""

    server: ServerInfo
    target: ConnectTarget | None  # what this connection was opened for, if known

    def query(self, name: str, params: Any = None) -> list[Row]:
        """Run the named statement from sql/<flavor>/ (values bound as %s params)."""
        ...

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        """Run literal SQL; for statements built by dbgauge itself, never user input."""
        ...

    def close(self) -> None: ...

    def abort(self) -> None:
        """Interrupt a running statement from another thread; the connection is then dead."""
        ...

    @property
    def closed(self) -> bool: ...


def connect(target: ConnectTarget, connect_timeout: float | None = None) -> Connection:
    """Open a connection for `target`, with session timeouts applied.

    Raises ConnectError/AuthError with a message naming the target's address, never its
    password.
    """
    timeout = target.connect_timeout if connect_timeout is None else connect_timeout
    params = target.connection_params()
    if target.kind == "mysql":
        from toolkit.db.mysql import MySQLConnection

        conn: Connection = MySQLConnection.open(params, timeout, target.query_timeout,
                                                target.lock_timeout)
    else:
        from toolkit.db.postgres import PostgresConnection

        conn = PostgresConnection.open(params, timeout, target.query_timeout,
                                       target.lock_timeout, pgbouncer=target.kind == "pgbouncer")
    conn.target = target
    return conn


def connect_dsn(dsn: str, *, password: str | None = None, kind: str | None = None,
                connect_timeout: float = 5.0, query_timeout: float = 30.0,
                lock_timeout: float = 5.0) -> Connection:
    """Open a connection from a DSN given on the command line or by the sandbox.

    `kind` defaults from the scheme; a postgresql:// DSN to the database `pgbouncer` is
    PgBouncer's admin console. `password` overrides one in the DSN.
    """
    from toolkit.dsn import parse_dsn
    from toolkit.redact import register_secret

    params = parse_dsn(dsn)
    if password is not None:
        params = params.with_password(password)
    register_secret(params.password)
    if kind is None:
        kind = "mysql" if params.family == "mysql" else (
            "pgbouncer" if params.dbname == "pgbouncer" else "postgres")
    if kind == "mysql":
        from toolkit.db.mysql import MySQLConnection

        return MySQLConnection.open(params, connect_timeout, query_timeout, lock_timeout)
    from toolkit.db.postgres import PostgresConnection

    return PostgresConnection.open(params, connect_timeout, query_timeout, lock_timeout,
                                   pgbouncer=kind == "pgbouncer")
