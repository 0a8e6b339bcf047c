"""PostgreSQL and PgBouncer-console connections over psycopg 3."""

from __future__ import annotations

import math
import socket
from typing import Any

import psycopg
from psycopg.rows import dict_row

from toolkit.db.base import Row, ServerInfo
from toolkit.db.version import parse_version
from toolkit.dsn import ConnParams
from toolkit.errors import AuthError, ConnectError, QueryError
from toolkit.redact import redact
from toolkit.sql import load_sql
from toolkit.targets import Target

_AUTH_SQLSTATES = {"28P01", "28000"}


class PostgresConnection:
    """One psycopg connection in autocommit mode.

    For PgBouncer's admin console the connection uses client-side binding
    (`ClientCursor`) and never prepares, because the console only speaks the simple
    query protocol; it accepts no startup `options`, so no server-side timeouts there.
    `client_binding` asks for the same binding on a PostgreSQL server, for utility
    statements (CREATE ROLE ... PASSWORD) that refuse server-side parameters.
    """

    def __init__(self, conn: psycopg.Connection[Row], params: ConnParams, server: ServerInfo,
                 pgbouncer: bool) -> None:
        self._conn = conn
        self._params = params
        self.server = server
        self.target: Target | None = None
        self._pgbouncer = pgbouncer
        self._aborted = False

    @classmethod
    def open(cls, params: ConnParams, connect_timeout: float, query_timeout: float,
             lock_timeout: float, *, pgbouncer: bool = False, client_binding: bool = False,
             application_name: str = "dbgauge") -> PostgresConnection:
        kwargs: dict[str, Any] = {
            "host": params.host,
            "port": params.port,
            "user": params.user,
            "dbname": params.dbname or ("pgbouncer" if pgbouncer else "postgres"),
            # libpq takes whole seconds and treats values below 2 as 2.
            "connect_timeout": max(2, math.ceil(connect_timeout)),
            "autocommit": True,
            "row_factory": dict_row,
            "prepare_threshold": None,
        }
        if params.password is not None:
            kwargs["password"] = params.password
        for key, value in params.options:
            kwargs[key] = value
        if pgbouncer or client_binding:
            kwargs["cursor_factory"] = psycopg.ClientCursor
        if not pgbouncer:
            kwargs["application_name"] = application_name
            kwargs["options"] = (
                f"-c statement_timeout={int(query_timeout * 1000)} "
                f"-c lock_timeout={int(lock_timeout * 1000)} "
                "-c idle_in_transaction_session_timeout=60000"
            )
        try:
            conn: psycopg.Connection[Row] = psycopg.connect(**kwargs)
        except psycopg.OperationalError as exc:
            text = str(exc)
            if getattr(exc, "sqlstate", None) in _AUTH_SQLSTATES or \
                    "authentication failed" in text:
                raise AuthError(
                    f"authentication failed for user {params.user!r} at {params.address}: "
                    "check the password source and pg_hba.conf"
                    + (" / the PgBouncer auth_file" if pgbouncer else "")
                ) from None
            raise ConnectError(f"cannot connect to {params.address}: {_reason(exc)}") from None
        except psycopg.Error as exc:
            raise ConnectError(f"cannot connect to {params.address}: {_reason(exc)}") from None
        self = cls(conn, params, ServerInfo("postgres", (0,), ""), pgbouncer)
        try:
            self.server = self._identify()
        except Exception:
            self.close()
            raise
        return self

    def _identify(self) -> ServerInfo:
        if self._pgbouncer:
            rows = self.execute_sql("SHOW VERSION")
            text = str(next(iter(rows[0].values())))  # "PgBouncer 1.18.0"
            version = parse_version(text.split()[-1])
            return ServerInfo("pgbouncer", version, text)
        rows = self.execute_sql(
            "SELECT current_setting('server_version_num')::int AS num, version() AS text"
        )
        num = int(rows[0]["num"])
        return ServerInfo("postgres", (num // 10000, num % 10000), str(rows[0]["text"]))

    def query(self, name: str, params: Any = None) -> list[Row]:
        return self.execute_sql(load_sql(self.server.flavor, name, self.server.version), params)

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params)  # SQL from sql/, never user input
                if cur.description is None:
                    return []
                return list(cur.fetchall())
        except psycopg.errors.QueryCanceled as exc:
            raise QueryError(f"query timed out on {self._params.address}: {_reason(exc)}",
                             sqlstate=exc.sqlstate, timed_out=True) from None
        except psycopg.Error as exc:
            raise QueryError(f"query failed on {self._params.address}: {_reason(exc)}",
                             sqlstate=exc.sqlstate) from None

    def close(self) -> None:
        try:
            self._conn.close()
        except Exception:
            pass

    def abort(self) -> None:
        # Shut the socket down rather than finish() the libpq connection: another thread
        # may be waiting on it, and a shutdown wakes that wait with EOF safely, even when
        # the server is frozen and would never answer a cancel request.
        self._aborted = True
        try:
            sock = socket.fromfd(self._conn.pgconn.socket, socket.AF_INET, socket.SOCK_STREAM)
        except (OSError, psycopg.Error):
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        finally:
            sock.close()

    @property
    def closed(self) -> bool:
        return bool(self._aborted or self._conn.closed or self._conn.broken)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact(text[0] if text else type(exc).__name__)
