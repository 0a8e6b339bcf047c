"""PostgreSQL and PgBouncer-console connections over psycopg 3."""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import pq, waiting
from psycopg.abc import PQGenConn
from psycopg.conninfo import conninfo_attempts, conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

from dbgauge.toolkit.db.base import Row, ServerInfo, read_only
from dbgauge.toolkit.db.pipeline import ReadAhead, Statement
from dbgauge.toolkit.db.privileges import pg_denied_hint
from dbgauge.toolkit.db.version import parse_version
from dbgauge.toolkit.dsn import ConnParams
from dbgauge.toolkit.errors import (
    AuthError,
    ConfigError,
    ConnectError,
    DbgaugeError,
    QueryError,
)
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.sql import load_sql
from dbgauge.toolkit.targets import Target

_AUTH_SQLSTATES = {"28P01", "28000"}
# libpq failures before any server is asked (a bad service name or file): input errors.
_LOCAL_ERRORS = ("definition of service", "service file ")


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
        self.connect_seconds = 0.0
        self._pgbouncer = pgbouncer
        self._aborted = False
        self._ahead: ReadAhead | None = None  # made on the first read_ahead
        self._ran: list[str] | None = None  # recorded from the first ran() on
        self._query_timeout = 30.0
        self._direct = False  # no pooler between us and the server (_identify)

    @classmethod
    def open(cls, params: ConnParams, connect_timeout: float, query_timeout: float,
             lock_timeout: float, *, pgbouncer: bool = False, client_binding: bool = False,
             application_name: str = "dbgauge", session_timeouts: bool = True
             ) -> PostgresConnection:
        kwargs: dict[str, Any] = dict(params.options)
        # What libpq decides itself (a service's host, port, user, database) is left out.
        kwargs.update({k: v for k, v in (("host", params.host), ("port", params.port),
                                         ("user", params.user), ("dbname", params.dbname))
                       if v})
        if "dbname" not in kwargs and "service" not in kwargs:
            kwargs["dbname"] = "pgbouncer" if pgbouncer else "postgres"
        # libpq's own bound (whole seconds, at least 2); _connect enforces the real one.
        kwargs["connect_timeout"] = max(2, math.ceil(connect_timeout))
        if params.password is not None:
            kwargs["password"] = params.password
        if not pgbouncer:
            kwargs.setdefault("application_name", application_name)
        if not pgbouncer and session_timeouts:
            kwargs["options"] = " ".join(filter(None, (
                kwargs.get("options"),  # the DSN's own -c settings come first, ours win
                f"-c statement_timeout={int(query_timeout * 1000)} "
                f"-c lock_timeout={int(lock_timeout * 1000)} "
                "-c idle_in_transaction_session_timeout=60000")))
        try:
            conn = _connect(kwargs, connect_timeout)
        except psycopg.OperationalError as exc:
            text = str(exc)
            if getattr(exc, "sqlstate", None) in _AUTH_SQLSTATES or \
                    "authentication failed" in text:
                raise AuthError(
                    f"authentication failed for user {params.user!r} at {params.address}: "
                    "check the password source and pg_hba.conf"
                    + (" / the PgBouncer auth_file" if pgbouncer else "")
                ) from None
            if any(m in text for m in _LOCAL_ERRORS):  # no server was asked: not down
                raise ConfigError(f"cannot connect to {params.address}: {_reason(exc)}"
                                  ) from None
            raise ConnectError(f"cannot connect to {params.address}: {_reason(exc)}") from None
        except psycopg.Error as exc:
            raise ConnectError(f"cannot connect to {params.address}: {_reason(exc)}") from None
        except OSError as exc:  # no descriptor left for the wait (EMFILE), and the like
            raise ConnectError(f"cannot connect to {params.address}: "
                               f"{exc.strerror or type(exc).__name__}") from None
        conn.autocommit = True
        conn.prepare_threshold = None  # only dbgauge's own statements are prepared: query()
        if pgbouncer or client_binding:
            conn.cursor_factory = psycopg.ClientCursor
        self = cls(conn, params, ServerInfo("postgres", (0,), ""), pgbouncer)
        self._query_timeout = query_timeout
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
            "SELECT current_setting('server_version_num')::int AS num, version() AS text, "
            "host(inet_server_addr()) AS addr, inet_server_port() AS port"
        )
        num = int(rows[0]["num"])
        # Talking to the server itself, not through a pooler: the backend's own address and
        # port are the ones this connection reached. Only then are statements read ahead
        # in a pipeline: a transaction-pooling PgBouncer before 1.21 hands the server
        # connection to another client at the first Sync, with the rest of the pipeline's
        # answers still to come (seen: another client's identify got a read-ahead row).
        info = self._conn.info
        self._direct = rows[0]["addr"] is not None and rows[0]["addr"] == info.hostaddr \
            and str(rows[0]["port"]) == str(info.port)
        return ServerInfo("postgres", (num // 10000, num % 10000), str(rows[0]["text"]))

    def query(self, name: str, params: Any = None) -> list[Row]:
        # sql/ statements are single statements a scrape repeats: prepared on first use on
        # a server (parsed and planned once per connection), never on PgBouncer's console,
        # which speaks only the simple query protocol.
        if params is None:
            if self._ran is not None:
                self._ran.append(name)
            if self._ahead is not None and (rows := self._ahead.take(name)) is not None:
                return rows
        return self._execute(load_sql(self.server.flavor, name, self.server.version), params,
                             prepare=not self._pgbouncer and self._conn.cursor_factory
                             is not psycopg.ClientCursor)

    def read_ahead(self, names: Sequence[str]) -> None:
        # In one pipeline (toolkit/db/pipeline.py), only when talking to the server itself
        # (_identify): not through a pooler, not on PgBouncer's console (simple query
        # protocol only), not with client-side binding.
        if self._ahead is None:
            if not names or not self._direct or self._conn.cursor_factory is psycopg.ClientCursor:
                return
            self._ahead = ReadAhead(self._conn, self._query_timeout + 5.0)
        if not names:
            self._ahead.clear()
            return
        statements = []
        for name in dict.fromkeys(names):
            try:  # named on another server (a failover to another major): not read ahead
                sql = load_sql(self.server.flavor, name, self.server.version)
            except DbgaugeError:
                continue
            if sql.split(None, 1)[0].upper() in ("SELECT", "WITH"):
                statements.append(Statement(name, sql))
        self._ahead.run(statements)

    def ran(self) -> tuple[str, ...]:
        ran, self._ran = tuple(self._ran or ()), []
        return ran

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        return self._execute(sql, params, prepare=False)

    def _execute(self, sql: str, params: Any, *, prepare: bool) -> list[Row]:
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params, prepare=prepare or None)  # never user input
                # not `description`, which builds a Column per column on every statement
                result = cur.pgresult
                if result is None or not result.nfields:
                    return []
                return list(cur.fetchall())
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def _error(self, exc: psycopg.Error) -> QueryError:
        """A driver error as dbgauge's QueryError: timed out or failed, with SQLSTATE."""
        if isinstance(exc, psycopg.errors.QueryCanceled):
            return QueryError(f"query timed out on {self._params.address}: {_reason(exc)}",
                              sqlstate=exc.sqlstate, timed_out=True)
        reason = _reason(exc)
        hint = "" if self._pgbouncer else pg_denied_hint(exc.sqlstate, reason, self.user)
        return QueryError(f"query failed on {self._params.address}: {reason}{hint}",
                          sqlstate=exc.sqlstate)

    @property
    def user(self) -> str:
        """The role this session logged in as (libpq's, whatever named it)."""
        return str(self._conn.info.user or self._params.user)

    def query_read_only(self, sql: str, max_rows: int) -> list[Row]:
        # stream() uses the extended protocol, which takes one statement only: text like
        # "SELECT 1; COMMIT; DELETE ..." is refused instead of leaving the transaction.
        return read_only(self, lambda: self._fetch_at_most(sql, max_rows))

    def _fetch_at_most(self, sql: str, max_rows: int) -> list[Row]:
        rows: list[Row] = []
        try:
            with self._conn.cursor() as cur:
                for row in cur.stream(sql):
                    if len(rows) == max_rows:
                        raise QueryError(f"query returned more than {max_rows} rows")
                    rows.append(row)
        except psycopg.Error as exc:
            raise self._error(exc) from None
        return rows

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


def _connect(kwargs: dict[str, Any], timeout: float) -> psycopg.Connection[Row]:
    """psycopg.connect bounded by `timeout` seconds to the millisecond: psycopg and libpq
    round a connect_timeout up to whole seconds of at least 2, so a 0.7 s scrape budget
    left would become 2 s. Same steps as psycopg.connect (every host/address in turn),
    each waited for with the time that is left; an attempt that times out is closed."""
    deadline = time.monotonic() + timeout
    params = conninfo_to_dict(make_conninfo("", **kwargs))
    errors: list[psycopg.Error] = []
    for attempt in conninfo_attempts(params):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        gen = _connect_attempt(make_conninfo("", **attempt))
        try:
            # One wake-up at the deadline, not every 0.1 s: thousands of stalled connects
            # polling ten times a second kept two cores busy and the scrape past its
            # deadline. Nothing needs the poll: a stopping daemon waits out the deadline.
            pgconn = waiting.wait_conn(gen, interval=remaining, timeout=remaining)
        except psycopg.Error as exc:
            errors.append(exc)
            continue
        finally:
            gen.close()  # a half-open attempt (timed out) finishes its libpq connection
        return psycopg.Connection(pgconn, row_factory=dict_row)
    if errors and not isinstance(errors[-1], psycopg.errors.ConnectionTimeout) \
            and "timeout" not in type(errors[-1]).__name__.lower():
        raise errors[-1]
    raise psycopg.errors.ConnectionTimeout(f"connection timeout expired ({timeout:.1f}s)")


def _connect_attempt(conninfo: str) -> PQGenConn[pq.abc.PGconn]:
    """psycopg's connection generator (generators.connect), except that the libpq
    connection is finished as soon as the attempt fails or is abandoned (closed at its
    deadline): psycopg's own leaves a timed-out one, and its socket, open until garbage
    collection gets to it, and a stalled server costs a socket per scrape."""
    pgconn = pq.PGconn.connect_start(conninfo.encode())
    try:
        while True:
            if pgconn.status == pq.ConnStatus.BAD:
                raise psycopg.OperationalError(f"connection is bad: {_pq_error(pgconn)}")
            status = pgconn.connect_poll()
            if status == pq.PollingStatus.OK:
                break
            if status == pq.PollingStatus.READING or status == pq.PollingStatus.WRITING:
                wait = waiting.Wait.R if status == pq.PollingStatus.READING else waiting.Wait.W
                while not (yield pgconn.socket, wait):
                    pass
                continue
            raise psycopg.OperationalError(f"connection failed: {_pq_error(pgconn)}")
    except BaseException:  # GeneratorExit included: the attempt was abandoned
        pgconn.finish()
        raise
    pgconn.nonblocking = 1
    return pgconn


def _pq_error(pgconn: pq.abc.PGconn) -> str:
    return pgconn.get_error_message().strip()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact(text[0] if text else type(exc).__name__)
