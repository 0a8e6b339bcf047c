"""MySQL and MariaDB connections over PyMySQL."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Sequence
from functools import cache
from typing import Any

import pymysql
import pymysql.cursors

from dbgauge.toolkit.db.base import Row, ServerInfo, read_only
from dbgauge.toolkit.db.version import parse_version
from dbgauge.toolkit.dsn import ConnParams
from dbgauge.toolkit.errors import AuthError, ConnectError, QueryError
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.sql import load_sql
from dbgauge.toolkit.targets import Target

# Server error codes that mean "your credentials are wrong", not "server is down".
_AUTH_ERRORS = {1045, 1698, 1044}
_TIMEOUT_ERRORS = {3024, 1969, 1317}  # max_execution_time, max_statement_time, interrupted


@cache
def _opportunistic_tls() -> ssl.SSLContext:
    """The context PyMySQL uses when no TLS is configured but the server offers it: no
    certificate is verified, so no CA store needs loading. PyMySQL builds one per
    connection with create_default_context(), which reads the system CA store (about
    20 ms per connection, most of a one-shot check's connect time)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


class _PyMySQLConnection(pymysql.connections.Connection):
    """PyMySQL's connection with the shared opportunistic TLS context, and one deadline
    for the whole connect: PyMySQL's connect_timeout bounds the TCP connect only, and
    every read after it (the greeting, TLS, authentication, SET NAMES) waits a whole
    read_timeout again, so a server that accepts and never greets held the connect
    past the scrape's deadline."""

    _connect_deadline: float | None = None

    def _create_ssl_ctx(self, sslp: Any) -> Any:
        if isinstance(sslp, dict) and not sslp:
            return _opportunistic_tls()
        return super()._create_ssl_ctx(sslp)  # type: ignore[misc]  # not in the stubs

    def connect(self, sock: Any = None) -> None:
        timeouts = self._read_timeout, self._write_timeout  # type: ignore[has-type]
        self._connect_deadline = time.monotonic() + float(self.connect_timeout or 10)
        try:
            super().connect(sock)
        finally:
            self._connect_deadline = None
            self._read_timeout, self._write_timeout = timeouts
            self._current_timeout = None  # the next read or write sets its own again

    def _read_bytes(self, num_bytes: int) -> Any:
        self._bound_to_deadline()
        return super()._read_bytes(num_bytes)  # type: ignore[misc]  # not in the stubs

    def _write_bytes(self, data: bytes) -> None:
        self._bound_to_deadline()
        super()._write_bytes(data)  # type: ignore[misc]  # not in the stubs

    def _bound_to_deadline(self) -> None:
        """While connecting, each read and write waits only for what is left."""
        sock = getattr(self, "_sock", None)  # not in the stubs
        if self._connect_deadline is not None and sock is not None:
            left = max(0.001, self._connect_deadline - time.monotonic())
            self._read_timeout = self._write_timeout = left
            sock.settimeout(left)
            self._current_timeout = left  # type: ignore[assignment]  # None in the stubs


def server_info(version_string: str) -> ServerInfo:
    """Detect flavor from SELECT VERSION(): MariaDB says so in the string."""
    flavor = "mariadb" if "mariadb" in version_string.lower() else "mysql"
    text = version_string
    if flavor == "mariadb" and text.startswith("5.5.5-"):
        text = text[len("5.5.5-"):]  # old replication-compat prefix
    return ServerInfo(flavor=flavor, version=parse_version(text), version_string=version_string)


class MySQLConnection:
    """One PyMySQL connection with bounded statement and lock waits."""

    def __init__(self, conn: pymysql.connections.Connection[Any], params: ConnParams,
                 server: ServerInfo) -> None:
        self._conn = conn
        self._params = params
        self.server = server
        self.target: Target | None = None
        self.connect_seconds = 0.0
        self._closed = False

    @classmethod
    def open(cls, params: ConnParams, connect_timeout: float, query_timeout: float,
             lock_timeout: float) -> MySQLConnection:
        kwargs: dict[str, Any] = {
            "user": params.user,
            "password": params.login_password or "",
            "database": params.dbname,
            "connect_timeout": connect_timeout,
            # Bounds every socket read, the handshake included: a server that accepts TCP
            # and never answers must not hang a scrape.
            "read_timeout": max(connect_timeout, query_timeout + 1.0),
            "write_timeout": max(connect_timeout, query_timeout + 1.0),
            "autocommit": True,
            "charset": "utf8mb4",
            "cursorclass": pymysql.cursors.DictCursor,
            "program_name": "dbgauge",
        }
        if params.host.startswith("/"):
            kwargs["unix_socket"] = params.host
        else:
            kwargs["host"] = params.host
            kwargs["port"] = params.port
        ssl_ca = params.option("ssl_ca")
        if ssl_ca:
            kwargs["ssl"] = {"ca": ssl_ca}
        try:
            conn = _PyMySQLConnection(**kwargs)
        except pymysql.err.OperationalError as exc:
            code = exc.args[0] if exc.args else 0
            if code in _AUTH_ERRORS:
                raise AuthError(
                    f"authentication failed for user {params.user!r} at {params.address} "
                    f"(MySQL error {code}): check the password source and the user's host grant"
                ) from None
            if code == 2013 and "timed out" in str(exc):  # PyMySQL says "during query"
                raise ConnectError(
                    f"cannot connect to {params.address}: the server accepted the connection "
                    f"but did not complete the handshake in {connect_timeout:.1f}s") from None
            raise ConnectError(f"cannot connect to {params.address}: {_reason(exc)}") from None
        except (OSError, pymysql.err.Error) as exc:
            raise ConnectError(f"cannot connect to {params.address}: {_reason(exc)}") from None
        self = cls(conn, params, ServerInfo("mysql", (0,), ""))
        try:
            rows = self.execute_sql("SELECT VERSION() AS version")
            self.server = server_info(str(rows[0]["version"]))
            self._apply_timeouts(query_timeout, lock_timeout)
            self._apply_slow_filter(params.option("log_slow_filter"))
        except Exception:
            self.close()
            raise
        return self

    def _apply_timeouts(self, query_timeout: float, lock_timeout: float) -> None:
        lock = max(1, int(lock_timeout))
        if self.server.flavor == "mariadb":
            self.execute_sql(
                "SET SESSION max_statement_time = %s, lock_wait_timeout = %s",
                (float(query_timeout), lock),
            )
        else:
            self.execute_sql(
                "SET SESSION max_execution_time = %s, lock_wait_timeout = %s",
                (int(query_timeout * 1000), lock),
            )

    def _apply_slow_filter(self, value: str | None) -> None:
        """The DSN's log_slow_filter (mysqld_exporter's --exporter.log_slow_filter): keeps
        dbgauge's statements out of the slow log on MariaDB and Percona Server. Oracle
        MySQL has no such variable: said plainly, as a setting to drop."""
        if not value:
            return
        try:
            self.execute_sql("SET SESSION log_slow_filter = %s", (value,))
        except QueryError as exc:
            raise QueryError(f"{self._params.address}: SET log_slow_filter failed ({exc}): "
                             "only MariaDB and Percona Server have it; drop "
                             "--exporter.log_slow_filter (log_slow_filter= in the DSN)"
                             ) from None

    def query(self, name: str, params: Any = None) -> list[Row]:
        return self.execute_sql(load_sql(self.server.flavor, name, self.server.version), params)

    def read_ahead(self, names: Sequence[str]) -> None:
        """Nothing to do: PyMySQL has no pipeline, each statement runs when asked."""

    def ran(self) -> tuple[str, ...]:
        return ()

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params)
                return list(cur.fetchall())
        except pymysql.err.Error as exc:
            raise self._error(exc) from None
        except OSError as exc:
            self._closed = True
            raise QueryError(f"connection to {self._params.address} lost: {exc}") from None

    def _error(self, exc: pymysql.err.Error) -> QueryError:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        # 2xxx are client-side errors (server gone, lost connection): reconnect later.
        # 1xxx are server errors on a healthy session, timeouts included.
        if isinstance(exc, pymysql.err.InterfaceError) or code == 0 or code >= 2000:
            self._closed = True
        # PyMySQL keeps the SQLSTATE only inside the message: the errno is the key.
        if code in _TIMEOUT_ERRORS:
            return QueryError(f"query timed out on {self._params.address}: {_reason(exc)}",
                              errno=code, timed_out=True)
        return QueryError(f"query failed on {self._params.address}: {_reason(exc)}",
                          errno=code or None)

    def query_read_only(self, sql: str, max_rows: int) -> list[Row]:
        # PyMySQL sends one statement per call (no CLIENT_MULTI_STATEMENTS), and the
        # unbuffered cursor stops holding rows at max_rows + 1.
        return read_only(self, lambda: self._fetch_at_most(sql, max_rows))

    def _fetch_at_most(self, sql: str, max_rows: int) -> list[Row]:
        try:
            with self._conn.cursor(pymysql.cursors.SSDictCursor) as cur:
                cur.execute(sql)
                rows = list(cur.fetchmany(max_rows + 1))
        except pymysql.err.Error as exc:
            raise self._error(exc) from None
        except OSError as exc:
            self._closed = True
            raise QueryError(f"connection to {self._params.address} lost: {exc}") from None
        if len(rows) > max_rows:
            raise QueryError(f"query returned more than {max_rows} rows")
        return rows

    def close(self) -> None:
        self._closed = True
        try:
            self._conn.close()
        except Exception:
            pass

    def abort(self) -> None:
        self._closed = True
        sock = getattr(self._conn, "_sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @property
    def closed(self) -> bool:
        return self._closed or not self._conn.open


def _reason(exc: BaseException) -> str:
    if isinstance(exc, pymysql.err.Error) and len(exc.args) >= 2:
        return redact(f"{exc.args[1]} (error {exc.args[0]})")
    return redact(str(exc) or type(exc).__name__)
