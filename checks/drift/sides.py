"""One server of a comparison (the source or a replica): its connection, the statements it
runs, and the few facts about it a run reads (position, load, scan counter).

Every error a side raises names its role and name ("replica db2: ..."), keeping the
server's error number and SQLSTATE, so callers test the error and the user reads where
it happened.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from dbgauge.checks.drift.normalize import MYSQL_FAMILY
from dbgauge.checks.drift.sql import Statement, TableQueries
from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import ConfigError, QueryError
from dbgauge.toolkit.targets import Target

_LOST = 2013  # CR_SERVER_LOST: the client's read timeout ended the wait for an answer


def check_kinds(targets: Sequence[Target]) -> None:
    """Refuse a PgBouncer admin console: its console holds no tables."""
    for target in targets:
        if target.kind == "pgbouncer":
            raise ConfigError(f"target {target.name} is a PgBouncer admin console: give the "
                              "database behind it")


class Side:
    """One server of the comparison: its connection and the statements it runs."""

    def __init__(self, name: str, conn: Connection, role: str,
                 answer_within: float | None = None) -> None:
        self.name = name
        self.conn = conn
        self.role = role
        self.flavor = conn.server.flavor
        self.version = conn.server.version
        self._read_overhead: int | None = None
        # PostgreSQL: the longest wait for an answer before the connection is cut (a
        # stopped server cannot enforce statement_timeout; MySQL's read_timeout does this)
        self.answer_within = None if self.mysql else answer_within

    @property
    def mysql(self) -> bool:
        return self.flavor in MYSQL_FAMILY

    def run(self, stmt: Statement) -> list[Row]:
        return self._bounded(lambda: self.conn.execute_sql(stmt[0], stmt[1]))

    def q(self, name: str, params: tuple[Any, ...] = ()) -> list[Row]:
        return self._bounded(lambda: self.conn.query(name, params))

    def _bounded(self, call: Callable[[], list[Row]]) -> list[Row]:
        """`call`, its error naming this side; cut after `answer_within` seconds."""
        timer, cut = None, threading.Event()

        def abort() -> None:
            cut.set()
            self.conn.abort()

        if self.answer_within is not None:
            timer = threading.Timer(self.answer_within, abort)
            timer.daemon = True
            timer.start()
        try:
            return call()
        except QueryError as exc:
            if cut.is_set():
                raise QueryError(f"{self.role} {self.name}: connection to {self.name} lost: "
                                 f"no answer within {self.answer_within:g} s",
                                 errno=_LOST) from None
            raise exc.again(f"{self.role} {self.name}: {exc}") from None
        finally:
            if timer is not None:
                timer.cancel()

    def position(self) -> tuple[str, int | None]:
        row = self.q("checksum_source_position")[0]
        server_id = row.get("server_id")
        return _text(row["pos"]), None if server_id is None else int(server_id)

    def rows_read(self) -> int:
        """Handler_read_rnd_next of this session (MariaDB)."""
        return int(self.q("checksum_rows_read")[0]["Value"])

    def whole_table(self, q: TableQueries, limit: float) -> tuple[Any, int]:
        """CHECKSUM TABLE and the number of rows it read, which is the table's row count:
        the session's scan counter around it, less the final end-of-table read and what
        reading the counter itself adds (measured once)."""
        if self._read_overhead is None:
            first = self.rows_read()
            self._read_overhead = self.rows_read() - first
        before = self.rows_read()
        value = self.run(q.whole_table(limit))[0]["Checksum"]
        return value, self.rows_read() - before - self._read_overhead - 1

    def threads_running(self) -> int:
        if self.mysql:
            rows = self.q("global_status_basic")
            values = {_text(r["Variable_name"]): r["Value"] for r in rows}
            return int(values.get("Threads_running", 0))
        return int(self.q("checksum_threads_running")[0]["running"])


def grant_hint(side: Side, name: str) -> str:
    """The GRANT that lets the checking user read table `name` on `side`."""
    if side.mysql:
        return f"GRANT SELECT ON {name} TO the checking user"
    schema = name.split(".", 1)[0]
    return (f"GRANT SELECT ON {name} TO the checking role, and USAGE ON SCHEMA {schema} "
            "(or pg_read_all_data)")


LOCK_WAIT_TIMEOUT = 1205  # ER_LOCK_WAIT_TIMEOUT: lock_wait_timeout or innodb_lock_wait_timeout


def lock_waited(exc: QueryError) -> bool:
    """True when the statement gave up waiting for a lock another session holds."""
    return exc.errno == LOCK_WAIT_TIMEOUT


def lock_wait_hint(side: Side, what: str) -> str:
    """Why `what` failed with error 1205 on `side`: a lock wait, not a missing privilege."""
    return (f"{what} on {side.role} {side.name} waited too long for a lock another session "
            "holds (MySQL error 1205, lock wait timeout): most often FLUSH TABLES WITH READ "
            "LOCK held by a backup (mariabackup, mysqldump --lock-all-tables), else a "
            "session's lock on the same table; SHOW PROCESSLIST shows the waiters ('Waiting "
            "for global read lock', 'Waiting for table metadata lock'). Run again when the "
            "lock is released")



def no_answer(exc: QueryError) -> bool:
    """True when the server did not answer in time (the client gave up reading), as a
    stopped (SIGSTOP) or hung server does; not a statement the server itself timed out."""
    return exc.errno == _LOST or ("connection to" in str(exc) and "lost" in str(exc))
