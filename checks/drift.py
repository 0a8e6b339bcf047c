"""`dbgauge checksum`: prove a replica holds the same rows as its source, and name the rows
that differ.

Two methods (docs/drift.md):

- **replicated** (MySQL family, the default there): pt-table-checksum's approach. Each
  chunk's count and hash are written into `dbgauge.checksums` by a REPLACE ... SELECT logged
  as a statement, so every replica recomputes the same chunk at the same point of the
  binlog: exact under live writes.
- **direct** (any pair, across engines too): each chunk is hashed on every side at once
  with type-normalised expressions. A replica of the source is first brought to the
  source's GTID/LSN; chunks that differ are re-checked (after waiting for the replica to
  reach the source's position again) so in-flight writes are not reported.

On MariaDB pairs, a quiet table expected to take at most `whole_table_time` is first
compared whole with CHECKSUM TABLE, and walked only if the values differ. Both methods walk
the primary key (or a non-null unique key) in chunks sized to `chunk_time`, pause while a
replica lags more than `max_lag` or the source is busy, stop with a clear message when a
replica's replication stops, and bisect differing chunks down to rows whose keys they
report. dbgauge never writes outside its own `dbgauge` schema: repair statements
are returned, never run.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from checks.drift_chunks import (
    INT_TYPES,
    Bound,
    ChunkSizer,
    IntRangePlanner,
    KeyChoice,
    KeyRange,
    canonical_key,
    choose_key,
    decode_bound,
    decode_value,
    diff_rows,
    encode_bound,
    encode_value,
    json_value,
    sort_items,
    split_range,
)
from checks.drift_normalize import MYSQL_FAMILY, Column, portable_problem
from checks.drift_repair import repair_script
from checks.drift_sql import Statement, TableQueries
from collectors.mysql_replication import ReplicaStatus, parse_replica_status
from toolkit.db import Connection, Row, connect
from toolkit.db.privileges import REPLICA_MONITOR, denied, query
from toolkit.db.values import text as _text
from toolkit.errors import CheckFailed, ConfigError, DbgaugeError, QueryError
from toolkit.redact import redact
from toolkit.result import CheckResult, Finding, Status
from toolkit.sql import load_sql, quote_ident
from toolkit.targets import FanOut, Target, unique_names

log = logging.getLogger("dbgauge.checksum")

METHODS = ("replicated", "direct")
_QUERY_TIMEOUT = 120.0  # chunks aim at chunk_time; this only stops a runaway statement
_KEY_BATCH = 500  # keys per re-check statement
_STATE_VERSION = 1
_REPLICATED_MIN_CHUNKS = 16  # replicated method: a table is cut into at least this many


class DriftError(CheckFailed):
    """The check could not be done: the message says why and what to do."""


class ReplicationStopped(DriftError):
    """A replica stopped replicating: waiting for it would never end."""


class Interrupted(DriftError):
    """The run stopped early (--run-time or a signal); --resume continues it."""


@dataclass(frozen=True)
class ChecksumOptions:
    """What to compare and how; the CLI and the daemon job both build one."""

    tables: tuple[str, ...] = ()  # schema.table names; empty = every table
    exclude: tuple[str, ...] = ()  # fnmatch patterns on schema.table
    method: str | None = None  # None: replicated for MySQL-family replicas, else direct
    chunk_time: float = 0.5
    max_lag: float = 1.0
    max_threads_running: int = 25
    retries: int = 3  # re-checks of a differing chunk/row before it is reported
    retry_delay: float = 0.25
    print_repair: bool = False
    resume: bool = False
    state_file: Path | None = None
    keep_state: bool = True  # write progress for --resume (the daemon does not)
    run_time: float | None = None  # stop (resumably) after this many seconds
    one_chunk_max_rows: int = 100_000  # keyless tables up to this size: one chunk
    leaf_rows: int = 10_000  # bisection stops and compares rows (key, MD5) at this size
    split_factor: int = 16
    initial_chunk_rows: int = 1000
    wait_timeout: float = 60.0  # for a replica to reach the source's position
    max_pause: float = 600.0  # longest pause for lag/load before giving up
    max_differences: int = 1000  # keys reported per table and replica (counts stay exact)
    # MariaDB pairs: a table expected to take at most this long, and not written for
    # whole_table_idle seconds, is first compared whole with CHECKSUM TABLE (0: never).
    whole_table_time: float = 2.0
    whole_table_idle: float = 1.0
    whole_table_rate: float = 1_000_000.0  # rows/s CHECKSUM TABLE is assumed to do until seen


@dataclass(frozen=True)
class Difference:
    """One row that differs on one replica: missing there, extra there, or changed."""

    replica: str
    kind: str
    key: tuple[tuple[str, Any], ...]

    def key_json(self) -> dict[str, Any]:
        return {col: json_value(value) for col, value in self.key}

    def key_text(self) -> str:
        return ", ".join(f"{col}={json_value(value)}" for col, value in self.key)


@dataclass(frozen=True)
class TableResult:
    """One table's outcome: status ok, drift or unchecked (with the reason)."""

    table: str
    status: str
    rows: int = 0
    chunks: int = 0
    differing_chunks: tuple[tuple[str, int], ...] = ()
    differing_rows: tuple[tuple[str, int], ...] = ()
    differences: tuple[Difference, ...] = ()
    seconds: float = 0.0
    reason: str | None = None
    resumed_from_chunk: int | None = None
    repair: tuple[tuple[str, tuple[str, ...]], ...] = ()
    notes: tuple[str, ...] = ()
    rechecked_chunks: int = 0  # differed at first, matched when re-checked: in-flight writes
    whole_table: bool = False  # proven equal by the whole-table pre-check (no chunk walk)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table, "status": self.status, "rows": self.rows,
            "chunks": self.chunks, "differing_chunks": dict(self.differing_chunks),
            "differing_rows": dict(self.differing_rows),
            "differences": [{"replica": d.replica, "kind": d.kind, "key": d.key_json()}
                            for d in self.differences],
            "seconds": round(self.seconds, 3), "reason": self.reason,
            "resumed_from_chunk": self.resumed_from_chunk,
            "rechecked_chunks": self.rechecked_chunks, "whole_table": self.whole_table,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class DriftResult:
    """A whole run: status ok, drift, or error (some table could not be checked)."""

    method: str
    source: str
    replicas: tuple[str, ...]
    tables: tuple[TableResult, ...]
    seconds: float
    notes: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        if any(t.status == "drift" for t in self.tables):
            return "drift"
        if any(t.status == "unchecked" for t in self.tables):
            return "error"
        return "ok"

    def to_json(self) -> dict[str, Any]:
        repair: dict[str, list[str]] = {}
        for table in self.tables:
            for replica, statements in table.repair:
                repair.setdefault(replica, []).extend(statements)
        doc: dict[str, Any] = {
            "status": self.status, "method": self.method, "source": self.source,
            "replicas": list(self.replicas), "seconds": round(self.seconds, 3),
            "tables": [t.to_json() for t in self.tables], "notes": list(self.notes),
        }
        if repair:
            doc["repair"] = repair
        return doc

    def check_result(self) -> CheckResult:
        """The same result as a generic check result (status, findings with evidence)."""
        findings: list[Finding] = []
        for table in self.tables:
            if table.status == "unchecked":
                findings.append(Finding(Status.UNKNOWN, self.source, "checksum/unchecked",
                                        f"{table.table}: {table.reason}"))
            for d in table.differences:
                findings.append(Finding(Status.CRITICAL, d.replica, f"checksum/{d.kind}",
                                        f"{table.table}: row {d.key_text()} {d.kind}",
                                        {k: str(json_value(v)) for k, v in d.key}))
        status = {"ok": Status.OK, "drift": Status.CRITICAL, "error": Status.UNKNOWN}[
            self.status]
        drifted = sum(1 for t in self.tables if t.status == "drift")
        summary = (f"{len(self.tables)} table(s) compared, {drifted} with drift"
                   if self.tables else "no tables to compare")
        return CheckResult("checksum", status, summary, tuple(findings),
                           (("tables", float(len(self.tables))),
                            ("drifted_tables", float(drifted))))


class Reporter(Protocol):
    """Progress and notes while a run goes on; the CLI draws a bar, the daemon logs."""

    def progress(self, table: str, rows: int, total: int) -> None:
        """`rows` of an estimated `total` of `table` are done."""

    def note(self, text: str) -> None:
        """Something the operator should know (a pause, a replica compared as is)."""


class LogReporter:
    """Notes to the log at `level`; no progress."""

    def __init__(self, level: int = logging.INFO) -> None:
        self.level = level

    def progress(self, table: str, rows: int, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        log.log(self.level, "%s", text)


# --------------------------------------------------------------------------- endpoints


def check_kinds(targets: Sequence[Target]) -> None:
    """Refuse a PgBouncer admin console: its console holds no tables."""
    for target in targets:
        if target.kind == "pgbouncer":
            raise ConfigError(f"target {target.name} is a PgBouncer admin console: give the "
                              "database behind it")


# --------------------------------------------------------------------------- one side


class Side:
    """One server of the comparison: its connection and the statements it runs."""

    def __init__(self, name: str, conn: Connection, role: str) -> None:
        self.name = name
        self.conn = conn
        self.role = role
        self.flavor = conn.server.flavor
        self.version = conn.server.version
        self._read_overhead: int | None = None

    @property
    def mysql(self) -> bool:
        return self.flavor in MYSQL_FAMILY

    def run(self, stmt: Statement) -> list[Row]:
        try:
            return self.conn.execute_sql(stmt[0], stmt[1])
        except QueryError as exc:
            raise exc.again(f"{self.role} {self.name}: {exc}") from None

    def q(self, name: str, params: tuple[Any, ...] = ()) -> list[Row]:
        try:
            return self.conn.query(name, params)
        except QueryError as exc:
            raise exc.again(f"{self.role} {self.name}: {exc}") from None

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


class Link:
    """How a replica follows the source: how to tell it is running, its lag, and how to
    wait until it has applied everything the source had at some point."""

    def __init__(self, replica: Side, kind: str, detail: str = "") -> None:
        self.replica = replica
        self.kind = kind  # mysql | pg-physical | pg-logical | none
        self.detail = detail

    @property
    def follows(self) -> bool:
        return self.kind != "none"

    def check(self) -> float | None:
        """Lag in seconds (None when unknown); raises ReplicationStopped."""
        rep = self.replica
        if self.kind == "mysql":
            channels = _replica_channels(rep)
            for st in channels:
                if not st.io_running or not st.sql_running:
                    errno = st.last_sql_errno or st.last_io_errno
                    raise ReplicationStopped(
                        f"replication on replica {rep.name} is stopped (IO thread "
                        f"{st.io_thread}, SQL thread {'Yes' if st.sql_running else 'No'}"
                        f"{f', last error {errno}' if errno else ''}): start it (START "
                        "REPLICA / START SLAVE) and run the check again; a stopped replica is "
                        "never waited for")
            lags = [st.seconds_behind for st in channels if st.seconds_behind is not None]
            return max(lags) if lags else None
        if self.kind == "pg-physical":
            row = rep.q("replication_local")[0]
            if _text(row.get("wal_receiver_status")) != "streaming":
                raise ReplicationStopped(
                    f"standby {rep.name} is not streaming from its primary (WAL receiver: "
                    f"{_text(row.get('wal_receiver_status')) or 'not running'}): fix "
                    "replication and run the check again")
            lag = row.get("lag_seconds")
            return None if lag is None else float(lag)
        if self.kind == "pg-logical":
            state = rep.q("checksum_replica_state")[0]
            if int(state["disabled"]) or int(state["apply_workers"]) < int(
                    state["subscriptions"]):
                raise ReplicationStopped(
                    f"logical replication into {rep.name} is stopped ("
                    f"{int(state['disabled'])} disabled subscription(s), "
                    f"{int(state['apply_workers'])} of {int(state['subscriptions'])} apply "
                    "workers running): enable the subscription / look at the subscriber's "
                    "log, and run the check again")
        return None

    def wait(self, pos: str, timeout: float, *, fail: bool = True) -> bool:
        """Until the replica has applied the source's position `pos` (checking that it still
        replicates); False on timeout when `fail` is off."""
        deadline = time.monotonic() + timeout
        checked = time.monotonic()
        delay = 0.005
        while True:
            if self.kind == "mysql":  # the server waits, a second at most per call
                slice_ = max(0.001, min(1.0, deadline - time.monotonic()))
                result = self.replica.q("checksum_wait_position", (pos, slice_))[0]["result"]
                if result is not None and int(result) == 0:
                    return True
            elif self.replica.q("checksum_replica_reached", (pos,))[0]["reached"]:
                return True
            now = time.monotonic()
            if now - checked >= 1.0 or now >= deadline:
                self.check()
                checked = now
            if now >= deadline:
                if not fail:
                    return False
                raise DriftError(
                    f"replica {self.replica.name} did not reach the source's position {pos} "
                    f"within {timeout:.0f} s: it is lagging; run the check when it has "
                    "caught up, or raise --max-lag")
            if self.kind != "mysql":
                time.sleep(delay)
                delay = min(0.05, delay * 2)


def _replica_channels(side: Side) -> list[ReplicaStatus]:
    """SHOW REPLICA STATUS through the collectors' helper (which names the privilege)."""
    try:
        return [parse_replica_status(r) for r in query(side.conn, "replica_status",
                                                       REPLICA_MONITOR)]
    except QueryError as exc:
        raise exc.again(f"{side.role} {side.name}: {exc}") from None


def _link(source: Side, replica: Side) -> Link:
    if replica.mysql and source.mysql:
        channels = _replica_channels(replica)
        if not channels:
            return Link(replica, "none", f"{replica.name} is not a replica: compared as is")
        _, server_id = source.position()
        ids = {c.source_server_id for c in channels}
        if server_id is not None and server_id not in ids:
            return Link(replica, "none",
                        f"{replica.name} replicates from server_id "
                        f"{', '.join(str(i) for i in sorted(x for x in ids if x))}, not from "
                        f"the source (server_id {server_id}): compared without waiting for "
                        "its position")
        return Link(replica, "mysql")
    if not replica.mysql and not source.mysql:
        state = replica.q("checksum_replica_state")[0]
        if state["in_recovery"]:
            return Link(replica, "pg-physical")
        if int(state["subscriptions"]) == 1:
            return Link(replica, "pg-logical")
        if int(state["subscriptions"]) > 1:
            return Link(replica, "none", f"{replica.name} has several subscriptions: compared "
                                         "without waiting for a position")
        return Link(replica, "none")
    return Link(replica, "none")


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class TablePlan:
    """How one table is compared: the key, and the statements of every side."""

    name: str  # schema.table
    schema: str
    table: str
    key: KeyChoice | None
    source: Mapping[bool, TableQueries]  # by portable mode
    replicas: Mapping[str, TableQueries]
    int_key: bool
    rows_estimate: int
    ranges_safe: bool  # False: string keys across engines (collations order differently)
    # Every side is MariaDB of one major.minor version with the same columns in the same
    # order: CHECKSUM TABLE values are comparable.
    whole_table_ok: bool = False


def _columns(side: Side, schema: str, table: str) -> list[Column]:
    return [Column(name=_text(r["name"]), data_type=_text(r["data_type"]).lower(),
                   column_type=_text(r["column_type"]).lower(), nullable=bool(int(r["nullable"])),
                   charset=_text(r["charset"]) or None)
            for r in side.q("checksum_columns", (schema, table))]


def _layout(column: Column) -> tuple[str, str, bool, str | None]:
    """What CHECKSUM TABLE's value depends on, per column (the row image's layout)."""
    return column.name.lower(), column.column_type, column.nullable, column.charset


def _grant_hint(side: Side, name: str) -> str:
    if side.mysql:
        return f"GRANT SELECT ON {name} TO the checking user"
    return f"GRANT SELECT ON {name} TO the checking role (or pg_read_all_data)"


class _Run:
    """One checksum run: connections, the replica links, the state file, the results."""

    def __init__(self, source: Target, replicas: Sequence[Target],
                 options: ChecksumOptions, reporter: Reporter, stack: ExitStack) -> None:
        self.options = options
        self.reporter = reporter
        self.started = time.monotonic()
        names = unique_names([source, *replicas])
        self.source = self._open(source, names[0], "source", stack)
        self.replicas = [self._open(t, n, "replica", stack)
                         for t, n in zip(replicas, names[1:], strict=True)]
        self.links = {r.name: _link(self.source, r) for r in self.replicas}
        for link in self.links.values():
            if link.detail:
                reporter.note(link.detail)
        self.notes: list[str] = [link.detail for link in self.links.values() if link.detail]
        self.method = self._method()
        self.pool: FanOut[Callable[[], Any], Any] = stack.enter_context(
            FanOut(1 + len(self.replicas), "checksum"))
        self.last_throttle = 0.0
        self.whole_table_rate = options.whole_table_rate
        self.current_sizer = ChunkSizer(options.chunk_time, options.initial_chunk_rows)
        self.state = RunState.open(options, self.method, self.source.name,
                                   [r.name for r in self.replicas])
        if options.resume and not self.state.resumed:
            reporter.note("nothing to resume (no unfinished run with these arguments): "
                          "starting from the beginning")

    @staticmethod
    def _open(target: Target, name: str, role: str, stack: ExitStack) -> Side:
        target = replace(target, query_timeout=max(target.query_timeout, _QUERY_TIMEOUT))
        try:
            conn = connect(target)
        except DbgaugeError as exc:
            raise type(exc)(f"{role} {name}: {exc}") from None
        stack.callback(conn.close)
        side = Side(name, conn, role)
        side.q("checksum_session")
        return side

    def _method(self) -> str:
        method = self.options.method
        all_mysql = self.source.mysql and all(r.mysql for r in self.replicas)
        if method is None:
            follows = all(link.kind == "mysql" for link in self.links.values())
            method = "replicated" if all_mysql and follows else "direct"
        if method == "replicated":
            if not all_mysql:
                raise DriftError("--method replicated works within one MySQL/MariaDB "
                                 "replication topology only: use --method direct")
            for name, link in self.links.items():
                if link.kind != "mysql":
                    raise DriftError(f"--method replicated needs every replica to replicate "
                                     f"from the source, and {name} does not: use --method "
                                     "direct")
        return method

    # -- throttling and synchronisation

    def throttle(self, force: bool = False) -> None:
        """Pause while a replica lags more than max_lag or the source is busy."""
        self._check_run_time()
        now = time.monotonic()
        if not force and now - self.last_throttle < 0.5:
            return
        self.last_throttle = now
        paused_at: float | None = None
        while True:
            reasons: list[str] = []
            pos: str | None = None
            for link in self.links.values():
                lag = link.check()
                if link.kind == "pg-logical":
                    pos = pos or self.source.position()[0]
                    if not link.wait(pos, self.options.max_lag, fail=False):
                        reasons.append(f"{link.replica.name} has not applied the source's "
                                       f"changes of the last {self.options.max_lag:g} s")
                elif lag is not None and lag > self.options.max_lag:
                    reasons.append(f"{link.replica.name} is {lag:g} s behind")
            running = self.source.threads_running()
            if running > self.options.max_threads_running:
                reasons.append(f"source runs {running} statements "
                               f"(> {self.options.max_threads_running})")
            if not reasons:
                if paused_at is not None:
                    self.reporter.note("resuming")
                return
            if paused_at is None:
                paused_at = time.monotonic()
                self.reporter.note("pausing: " + "; ".join(reasons))
            elif time.monotonic() - paused_at > self.options.max_pause:
                raise DriftError("gave up after pausing " f"{self.options.max_pause:.0f} s: "
                                 + "; ".join(reasons))
            self._check_run_time()
            time.sleep(0.5)

    def _check_run_time(self) -> None:
        limit = self.options.run_time
        if limit is not None and time.monotonic() - self.started > limit:
            self.state.save(force=True)
            raise Interrupted(f"stopped after --run-time {limit:g} s; progress is saved in "
                              f"{self.state.path}: continue with --resume")

    def catch_up(self) -> None:
        """Wait for every following replica to apply what the source has now."""
        if not any(link.follows for link in self.links.values()):
            return
        pos = self.source.position()[0]
        for link in self.links.values():
            if link.follows:
                link.check()
                link.wait(pos, self.options.wait_timeout)

    def synced(self, replica: Side, src_stmt: Statement, rep_stmt: Statement
               ) -> tuple[list[Row], list[Row]]:
        """Run on the source, then on the replica once it has applied the source's
        position as of just after: a row that matches cannot be an in-flight write."""
        a = self.source.run(src_stmt)
        link = self.links[replica.name]
        if link.follows:
            link.wait(self.source.position()[0], self.options.wait_timeout)
        return a, replica.run(rep_stmt)

    def parallel(self, calls: Sequence[Callable[[], Any]]) -> list[Any]:
        """Run `calls` at once (one per connection); every call has ended when this returns
        or raises, so no connection is still busy with a statement."""
        outcomes = self.pool.map(calls, lambda call: call())
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome
        return outcomes

    def whole_table(self, plan: TablePlan, started: float) -> TableResult | None:
        """The whole-table pre-check: CHECKSUM TABLE on every side at once, each counting
        the rows it read. A result when every side agrees; None to walk the chunks: the
        values differ (drift, or a write in flight), a side has no value or cannot run it,
        the table was written just now, or it is expected to take longer than
        --whole-table-time (or did, and was interrupted by the server)."""
        limit = self.options.whole_table_time
        if not plan.whole_table_ok or limit <= 0 \
                or plan.rows_estimate > self.whole_table_rate * limit:
            return None
        idle = self.source.q("checksum_table_idle", (plan.schema, plan.table))
        if idle and idle[0]["idle_seconds"] is not None \
                and float(idle[0]["idle_seconds"]) < self.options.whole_table_idle:
            return None
        self.throttle()

        def side(who: Side, q: TableQueries) -> Callable[[], tuple[Any, int]]:
            return lambda: who.whole_table(q, limit)

        t0 = time.monotonic()
        try:
            (value, rows), *others = self.parallel(
                [side(self.source, plan.source[False]),
                 *(side(rep, plan.replicas[rep.name]) for rep in self.replicas)])
        except QueryError as exc:
            self._whole_table_failed(plan, t0)
            log.info("%s: no whole-table checksum (%s): comparing chunks", plan.name, exc)
            return None
        if value is None or rows < 0 or any(v is None for v, _ in others):
            # MariaDB answers NULL rather than an error when max_statement_time strikes
            # while the table is being opened.
            self._whole_table_failed(plan, t0)
            return None
        self.whole_table_rate = max(rows, 1) / max(time.monotonic() - t0, 1e-3)
        if any(other != (value, rows) for other in others):
            return None
        if self.method == "replicated":  # chunk rows of an earlier run would read as current
            self.source.q("checksum_clear_table", (plan.schema, plan.table))
        return TableResult(plan.name, "ok", rows, 1, seconds=time.monotonic() - started,
                           whole_table=True)

    def _whole_table_failed(self, plan: TablePlan, t0: float) -> None:
        """After a pre-check that ran into its time limit, expect at most half the speed it
        would have needed, so tables of that size are not tried again."""
        limit = self.options.whole_table_time
        if time.monotonic() - t0 >= limit:
            self.whole_table_rate = min(self.whole_table_rate,
                                        max(plan.rows_estimate, 1) / limit / 2)

    # -- planning

    def tables(self) -> list[tuple[str, str, int, bool]]:
        rows = self.source.q("checksum_tables")
        found = {(_text(r["db"]), _text(r["tbl"])): (int(r["rows_estimate"] or 0),
                                                   bool(int(r["readable"]))) for r in rows}
        wanted: list[tuple[str, str]] = []
        if self.options.tables:
            for name in self.options.tables:
                schema, dot, table = name.partition(".")
                if not dot or not schema or not table:
                    raise ConfigError(f"--tables {name!r}: write tables as schema.table")
                if (schema, table) not in found:
                    raise DriftError(
                        f"table {name} does not exist on source {self.source.name} (or the "
                        f"checking user cannot see it: {_grant_hint(self.source, name)})")
                if not found[(schema, table)][1]:
                    raise DriftError(f"no privilege to read {name} on source "
                                     f"{self.source.name}: {_grant_hint(self.source, name)}")
                wanted.append((schema, table))
        else:
            wanted = list(found)
        out = []
        for schema, table in wanted:
            name = f"{schema}.{table}"
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.options.exclude):
                continue
            out.append((schema, table, *found[(schema, table)]))
        return out

    def plan(self, schema: str, table: str, estimate: int) -> TablePlan | TableResult:
        name = f"{schema}.{table}"
        try:
            columns = _columns(self.source, schema, table)
        except DbgaugeError as exc:
            return TableResult(name, "unchecked", reason=str(exc))
        key = choose_key(self.source.q("checksum_keys", (schema, table)))
        try:  # names are formatted into SQL: refuse, rather than escape, odd ones
            for ident in (schema, table, *(c.name for c in columns)):
                quote_ident(ident, self.source.flavor)
        except DbgaugeError as exc:
            return TableResult(name, "unchecked", reason=str(exc))
        by_name = {c.name.lower(): c for c in columns}
        replicas: dict[str, TableQueries] = {}
        modes: set[bool] = set()
        ranges_safe = True
        whole_table_ok = self.source.flavor == "mariadb"
        for rep in self.replicas:
            rep_columns = _columns(rep, schema, table)
            if not rep_columns:
                return TableResult(name, "unchecked",
                                   reason=f"table does not exist on replica {rep.name} (or the "
                                          f"checking user cannot see it)")
            rep_by_name = {c.name.lower(): c for c in rep_columns}
            only_src = sorted(set(by_name) - set(rep_by_name))
            only_rep = sorted(set(rep_by_name) - set(by_name))
            if only_src or only_rep:
                return TableResult(name, "unchecked", reason=(
                    f"columns differ on replica {rep.name}"
                    + (f"; only on the source: {', '.join(only_src)}" if only_src else "")
                    + (f"; only on the replica: {', '.join(only_rep)}" if only_rep else "")))
            portable = rep.mysql != self.source.mysql
            whole_table_ok = whole_table_ok and (
                rep.flavor == self.source.flavor
                and rep.version[:2] == self.source.version[:2]
                and [_layout(c) for c in rep_columns] == [_layout(c) for c in columns])
            if portable:
                problem = (portable_problem(self.source.flavor, columns)
                           or portable_problem(rep.flavor, rep_columns))
                if problem:
                    return TableResult(name, "unchecked", reason=problem)
                if key is not None and any(
                        by_name[k.lower()].data_type not in INT_TYPES for k in key.columns):
                    ranges_safe = False
            modes.add(portable)
            ordered = tuple(rep_by_name[c.name.lower()] for c in columns)
            rep_key = tuple(rep_by_name[k.lower()].name for k in key.columns) if key else ()
            rep_index = None
            if key is not None:
                rep_choice = choose_key(rep.q("checksum_keys", (schema, table)))
                if rep_choice is None or [c.lower() for c in rep_choice.columns] != [
                        c.lower() for c in key.columns]:
                    return TableResult(name, "unchecked", reason=(
                        f"the key differs on replica {rep.name}: the source is chunked by "
                        f"({', '.join(key.columns)}), the replica has "
                        + (f"({', '.join(rep_choice.columns)})" if rep_choice else
                           "no usable key")))
                rep_index = rep_choice.index
            replicas[rep.name] = TableQueries(rep.flavor, rep.version, schema, table, ordered,
                                              rep_key, rep_index, portable)
        source = {
            mode: TableQueries(self.source.flavor, self.source.version, schema, table,
                               tuple(columns), key.columns if key else (),
                               key.index if key else None, mode)
            for mode in (modes or {False})
        }
        int_key = bool(key and len(key.columns) == 1
                       and by_name[key.columns[0].lower()].data_type in INT_TYPES)
        if key is None or not ranges_safe:
            count = int(self.source.run(source[min(source)].count())[0]["cnt"])
            if count > self.options.one_chunk_max_rows:
                why = ("no primary key or unique NOT NULL key to chunk by" if key is None else
                       "its key has text columns, which MySQL and PostgreSQL collations order "
                       "differently, so it is not cut into ranges across engines")
                return TableResult(name, "unchecked", rows=count, reason=(
                    f"{why}, and {count} rows is more than the "
                    f"{self.options.one_chunk_max_rows} compared as one chunk"))
            estimate = count
        return TablePlan(name, schema, table, key, source, replicas, int_key, estimate,
                         ranges_safe, whole_table_ok)

    # -- chunk walking

    def chunks(self, plan: TablePlan, resume_after: Bound | None, chunk_rows: int | None
               ) -> Iterator[tuple[KeyRange, Callable[[int, float], None]]]:
        """Ranges covering the whole key space after `resume_after`, and for each a
        callback that reports (source rows, seconds) to size the next one."""
        initial = chunk_rows or self.options.initial_chunk_rows
        if self.method == "replicated":
            # Replicas recompute a chunk only after the source has committed it, so they end
            # about one chunk after the source: many small chunks keep that tail short.
            cap = max(self.options.initial_chunk_rows,
                      plan.rows_estimate // _REPLICATED_MIN_CHUNKS)
            sizer = ChunkSizer(self.options.chunk_time, min(initial, cap), max_rows=cap)
        else:
            sizer = ChunkSizer(self.options.chunk_time, initial)
        self.current_sizer = sizer
        q = plan.source[min(plan.source)]
        if plan.key is None or not plan.ranges_safe:
            yield KeyRange(resume_after, None), lambda rows, s: None
            return
        if plan.int_key:
            row = self.source.run(q.key_range())[0]
            if row["lo"] is None:
                yield KeyRange(resume_after, None), lambda rows, s: None
                return
            after = None if resume_after is None else int(resume_after[0])
            planner = IntRangePlanner(int(row["lo"]), int(row["hi"]), sizer, after)
            while (rng := planner.next()) is not None:
                yield rng, _observer(planner, rng)
            return
        lower = resume_after
        while True:
            found = self.source.run(q.next_boundary(lower, max(0, sizer.rows - 1)))
            if not found:
                yield KeyRange(lower, None), sizer.observe
                return
            upper = tuple(found[0][k] for k in plan.key.columns)
            yield KeyRange(lower, upper), sizer.observe
            lower = upper

    # -- finding the rows

    def _hash_map(self, rows: list[Row], key: Sequence[str]) -> dict[Bound, str]:
        return {canonical_key(r[k] for k in key): _text(r["dbgauge_row_hash"]) for r in rows}

    def _same(self, a: list[Row], b: list[Row]) -> bool:
        return (int(a[0]["cnt"]), _text(a[0]["crc"])) == (int(b[0]["cnt"]), _text(b[0]["crc"]))

    def recheck(self, plan: TablePlan, replica: Side, rng: KeyRange, *, delay_first: bool,
                attempts: int | None = None) -> tuple[list[Row], list[Row]] | None:
        """None when the range matches on a synchronised re-check (it was in flight),
        else the last differing (source, replica) chunk rows."""
        src_q = plan.source[plan.replicas[replica.name].portable]
        last: tuple[list[Row], list[Row]] | None = None
        for attempt in range(max(1, self.options.retries if attempts is None else attempts)):
            if attempt or delay_first:
                time.sleep(self.options.retry_delay)
            a, b = self.synced(replica, src_q.chunk(rng), plan.replicas[replica.name].chunk(rng))
            if self._same(a, b):
                return None
            last = (a, b)
        return last

    def locate(self, plan: TablePlan, replica: Side, rng: KeyRange, counts: tuple[int, int]
               ) -> list[tuple[str, Bound]]:
        """Bisect a differing range down to rows; returns candidate (kind, key) pairs, to be
        confirmed by `confirm` (once for all of a table's candidates: it sleeps)."""
        src_q = plan.source[plan.replicas[replica.name].portable]
        rep_q = plan.replicas[replica.name]
        size = max(counts)
        leaf = self.options.leaf_rows if plan.ranges_safe else max(self.options.leaf_rows, size)
        if size <= leaf or plan.key is None:
            return self.row_diff(plan, replica, rng)
        every = max(1, math.ceil(size / self.options.split_factor))
        side, queries = (self.source, src_q) if counts[0] >= counts[1] else (replica, rep_q)
        points = [tuple(r[k] for k in queries.key) for r in side.run(queries.split_points(rng,
                                                                                          every))]
        pieces = split_range(rng, points)
        if len(pieces) < 2:
            return self.row_diff(plan, replica, rng)
        found: list[tuple[str, Bound]] = []
        for piece in pieces:
            # One synchronised look per piece: rows found in the end are re-read anyway.
            differing = self.recheck(plan, replica, piece, delay_first=False, attempts=1)
            if differing is not None:
                a, b = differing
                found += self.locate(plan, replica, piece,
                                     (int(a[0]["cnt"]), int(b[0]["cnt"])))
        return found

    def row_diff(self, plan: TablePlan, replica: Side, rng: KeyRange
                 ) -> list[tuple[str, Bound]]:
        src_q = plan.source[plan.replicas[replica.name].portable]
        rep_q = plan.replicas[replica.name]
        a, b = self.synced(replica, src_q.rows(rng), rep_q.rows(rng))
        return diff_rows(self._hash_map(a, src_q.key), self._hash_map(b, rep_q.key))

    def confirm(self, plan: TablePlan, replica: Side, candidates: list[tuple[str, Bound]]
                ) -> list[tuple[str, Bound]]:
        """Keep the rows that still differ after each of `retries` synchronised re-reads."""
        src_q = plan.source[plan.replicas[replica.name].portable]
        rep_q = plan.replicas[replica.name]
        for _ in range(max(1, self.options.retries)):
            if not candidates:
                break
            time.sleep(self.options.retry_delay)
            keys = [key for _, key in candidates]
            still: list[tuple[str, Bound]] = []
            for start in range(0, len(keys), _KEY_BATCH):
                batch = keys[start:start + _KEY_BATCH]
                a, b = self.synced(replica, src_q.hashes(batch), rep_q.hashes(batch))
                still += diff_rows(self._hash_map(a, src_q.key), self._hash_map(b, rep_q.key))
            candidates = still
        return candidates

    # -- one table, both methods

    def check_table(self, schema: str, table: str, estimate: int) -> TableResult:
        planned = self.plan(schema, table, estimate)
        if isinstance(planned, TableResult):
            return planned
        plan = planned
        saved = self.state.table(plan.name)
        started = time.monotonic()
        resume_after = decode_bound(saved.get("next_lower")) if saved else None
        rows = int(saved.get("rows", 0)) if saved else 0
        chunks = int(saved.get("chunks", 0)) if saved else 0
        suspects: list[tuple[str, KeyRange]] = [
            (s[0], KeyRange(decode_bound(s[1]), decode_bound(s[2])))
            for s in (saved.get("suspects", []) if saved else [])]
        resumed_from = chunks + 1 if saved and chunks else None
        if resumed_from:
            self.reporter.note(f"{plan.name}: resuming at chunk {resumed_from}")
        elif (whole := self.whole_table(plan, started)) is not None:
            self.reporter.progress(plan.name, whole.rows, whole.rows)
            self.state.done(plan.name, whole)
            return whole
        self.catch_up()
        replicated = self.method == "replicated"
        if replicated and not saved:
            self.source.q("checksum_clear_table", (plan.schema, plan.table))
        walked = bool(saved and saved.get("walked"))
        for rng, observe in ([] if walked else self.chunks(
                plan, resume_after, saved.get("chunk_rows") if saved else None)):
            self.throttle()
            chunks += 1
            if replicated:
                cnt, seconds = self.replicate_chunk(plan, rng, chunks)
            else:
                cnt, seconds, differing = self.direct_chunk(plan, rng)
                suspects += [(name, rng) for name in differing]
            observe(cnt, seconds)
            rows += cnt
            self.reporter.progress(plan.name, rows, max(plan.rows_estimate, rows))
            self.state.progress(plan.name, rng.upper, rows, chunks, suspects,
                                self.current_sizer.rows)
        return self.finish_table(plan, rows, chunks, suspects, started, resumed_from)

    def direct_chunk(self, plan: TablePlan, rng: KeyRange) -> tuple[int, float, list[str]]:
        def timed(side: Side, q: TableQueries) -> Callable[[], tuple[list[Row], float]]:
            def call() -> tuple[list[Row], float]:
                t0 = time.monotonic()
                result = side.run(q.chunk(rng))
                return result, time.monotonic() - t0
            return call

        modes = sorted(plan.source)
        calls = [timed(self.source, plan.source[m]) for m in modes]
        calls += [timed(rep, plan.replicas[rep.name]) for rep in self.replicas]
        results = self.parallel(calls)
        by_mode = dict(zip(modes, results[:len(modes)], strict=True))
        differing = []
        for rep, (rows, _) in zip(self.replicas, results[len(modes):], strict=True):
            if not self._same(by_mode[plan.replicas[rep.name].portable][0], rows):
                differing.append(rep.name)
        first, seconds = results[0]
        return int(first[0]["cnt"]), seconds, differing

    def replicate_chunk(self, plan: TablePlan, rng: KeyRange, chunk: int) -> tuple[int, float]:
        q = plan.source[False]
        lower = json.dumps(encode_bound(rng.lower)) if rng.lower is not None else None
        upper = json.dumps(encode_bound(rng.upper)) if rng.upper is not None else None
        t0 = time.monotonic()
        self.source.run(q.replicate_chunk(rng, chunk, lower, upper))
        seconds = time.monotonic() - t0
        row = self.source.q("checksum_source_values", (plan.schema, plan.table, chunk))[0]
        cnt, crc = int(row["this_cnt"]), _text(row["this_crc"])
        self.source.q("checksum_update_source",
                      (round(seconds, 6), cnt, crc, plan.schema, plan.table, chunk))
        return cnt, seconds

    def replicated_suspects(self, plan: TablePlan, chunks: int
                            ) -> list[tuple[str, KeyRange]]:
        """After the last chunk: the chunks whose replica values differ from the source's."""
        self.catch_up()
        out: list[tuple[str, KeyRange]] = []
        for rep in self.replicas:
            rows = rep.q("checksum_replica_chunks", (plan.schema, plan.table))
            if len(rows) < chunks:
                raise DriftError(
                    f"replica {rep.name} has {len(rows)} of the {chunks} chunk rows of "
                    f"{plan.name} in dbgauge.checksums: a replication filter may skip the "
                    "dbgauge schema, or the replica is not replicating from this source; use "
                    "--method direct")
            for r in rows:
                this = (int(r["this_cnt"]), _text(r["this_crc"]))
                source = (None if r["source_cnt"] is None else int(r["source_cnt"]),
                          _text(r["source_crc"]))
                if this != source:
                    lower = r["lower_boundary"]
                    upper = r["upper_boundary"]
                    out.append((rep.name, KeyRange(
                        decode_bound(json.loads(lower)) if lower else None,
                        decode_bound(json.loads(upper)) if upper else None)))
        return out

    def finish_table(self, plan: TablePlan, rows: int, chunks: int,
                     suspects: list[tuple[str, KeyRange]], started: float,
                     resumed_from: int | None) -> TableResult:
        replicated = self.method == "replicated"
        if replicated:
            suspects = self.replicated_suspects(plan, chunks)
        by_replica = {rep.name: rep for rep in self.replicas}
        # Re-check and bisect every suspect chunk, then confirm all candidate rows of a
        # replica together (the confirmation rounds sleep between re-reads).
        looked: list[tuple[str, KeyRange, bool, list[tuple[str, Bound]]]] = []
        for name, rng in suspects:
            differing = self.recheck(plan, by_replica[name], rng, delay_first=False)
            candidates: list[tuple[str, Bound]] = []
            if differing is not None and plan.key is not None:
                a, b = differing
                candidates = self.locate(plan, by_replica[name], rng,
                                         (int(a[0]["cnt"]), int(b[0]["cnt"])))
            looked.append((name, rng, differing is not None, candidates))
        confirmed: dict[str, list[tuple[str, Bound]]] = {}
        for name in {name for name, _, _, c in looked if c}:
            everything = {item for n, _, _, c in looked if n == name for item in c}
            confirmed[name] = sort_items(self.confirm(plan, by_replica[name],
                                                      sort_items(everything)))
        differing_chunks: dict[str, int] = {}
        notes: list[str] = []
        rechecked = 0  # direct: chunks that differed at first sight, in flight
        for name, rng, differed, candidates in looked:
            kept = set(confirmed.get(name, ()))
            rows_found = any(item in kept for item in candidates)
            if rows_found or replicated or (differed and plan.key is None):
                # The replicated method's verdict is exact; the direct one stands when rows
                # are confirmed (or the table has no key to confirm them by).
                differing_chunks[name] = differing_chunks.get(name, 0) + 1
            else:
                rechecked += 1
            if plan.key is None and (differed or replicated):
                notes.append(f"{name}: the table differs; without a key its rows cannot be "
                             "named")
            elif replicated and not rows_found:
                notes.append(f"{name}: chunk {rng.describe()} differed when checksummed but "
                             "its rows match now")
        differences: list[Difference] = []
        differing_rows: dict[str, int] = {}
        repair: list[tuple[str, tuple[str, ...]]] = []
        for name, unique in confirmed.items():
            if not unique:
                continue
            differing_rows[name] = len(unique)
            rep_q = plan.replicas[name]
            for kind, key in unique[:self.options.max_differences]:
                differences.append(Difference(name, kind, tuple(zip(rep_q.key, key,
                                                                    strict=True))))
            if self.options.print_repair:
                repair.append((name, self.repair(plan, by_replica[name], unique)))
        status = "drift" if differing_chunks or differences else "ok"
        result = TableResult(
            plan.name, status, rows, chunks, tuple(sorted(differing_chunks.items())),
            tuple(sorted(differing_rows.items())), tuple(differences),
            time.monotonic() - started, None, resumed_from, tuple(repair), tuple(notes),
            rechecked)
        self.state.done(plan.name, result)
        return result

    def repair(self, plan: TablePlan, replica: Side, items: list[tuple[str, Bound]]
               ) -> tuple[str, ...]:
        src_q = plan.source[plan.replicas[replica.name].portable]
        wanted = [key for kind, key in items if kind != "extra"]
        rows: dict[Bound, Row] = {}
        for start in range(0, len(wanted), _KEY_BATCH):
            for row in self.source.run(src_q.fetch(wanted[start:start + _KEY_BATCH])):
                rows[canonical_key(row[k] for k in src_q.key)] = row
        rep_q = plan.replicas[replica.name]
        return tuple(repair_script(replica.flavor, replica.name, rep_q.schema, rep_q.table,
                                   rep_q.columns, src_q.columns, rep_q.key, items, rows))


def _observer(planner: IntRangePlanner, rng: KeyRange) -> Callable[[int, float], None]:
    def observe(rows: int, seconds: float) -> None:
        planner.observe(rng, rows, seconds)
    return observe


# --------------------------------------------------------------------------- resume state


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "dbgauge"


class RunState:
    """Progress of a run in a JSON file, so --resume can continue where it stopped.

    Keyed by what was asked (source, replicas, method, tables): a state file written for
    other arguments is never used.
    """

    def __init__(self, path: Path | None, identity: str, data: dict[str, Any],
                 resumed: bool) -> None:
        self.path = path
        self.identity = identity
        self.data = data
        self.resumed = resumed
        self._saved = 0.0

    @classmethod
    def open(cls, options: ChecksumOptions, method: str, source: str,
             replicas: Sequence[str]) -> RunState:
        ident = json.dumps({"source": source, "replicas": list(replicas), "method": method,
                            "tables": list(options.tables), "exclude": list(options.exclude)},
                           sort_keys=True)
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        if not options.keep_state:
            return cls(None, ident, {"version": _STATE_VERSION, "identity": ident,
                                     "tables": {}}, False)
        path = options.state_file or default_state_dir() / f"checksum-{digest}.json"
        if options.resume and path.exists():
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                data = {}
            if data.get("identity") == ident and data.get("version") == _STATE_VERSION \
                    and not data.get("complete"):
                return cls(path, ident, data, True)
        return cls(path, ident, {"version": _STATE_VERSION, "identity": ident, "tables": {}},
                   False)

    def table(self, name: str) -> dict[str, Any] | None:
        entry = self.data["tables"].get(name)
        return entry if isinstance(entry, dict) else None

    def finished(self, name: str) -> TableResult | None:
        entry = self.table(name)
        if not self.resumed or not entry or entry.get("status") != "done":
            return None
        return _result_from_json(entry["result"])

    def progress(self, name: str, upper: Bound | None, rows: int, chunks: int,
                 suspects: list[tuple[str, KeyRange]], chunk_rows: int) -> None:
        self.data["tables"][name] = {
            "status": "running", "next_lower": encode_bound(upper), "rows": rows,
            "chunks": chunks, "chunk_rows": chunk_rows,
            "suspects": [[n, encode_bound(r.lower), encode_bound(r.upper)]
                         for n, r in suspects]}
        if upper is None:  # the last chunk is done: nothing left to walk
            self.data["tables"][name]["walked"] = True
        self.save()

    def done(self, name: str, result: TableResult) -> None:
        self.data["tables"][name] = {"status": "done", "result": _result_to_json(result)}
        self.save(force=True)

    def complete(self) -> None:
        """The run finished: nothing is left to resume."""
        self.data["complete"] = True
        if self.path is not None:
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                raise DriftError(f"cannot remove the --resume state file {self.path}: "
                                 f"{exc.strerror}") from None

    def save(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.path is None or (not force and now - self._saved < 1.0):
            return
        self._saved = now
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps(self.data))
            os.replace(tmp, self.path)
        except OSError as exc:
            raise DriftError(f"cannot write the --resume state file {self.path}: "
                             f"{exc.strerror}; pass --state-file") from None


def _result_to_json(result: TableResult) -> dict[str, Any]:
    doc = result.to_json()
    doc["differences"] = [{"replica": d.replica, "kind": d.kind,
                           "key": [[c, encode_value(v)] for c, v in d.key]}
                          for d in result.differences]
    doc["repair"] = [[n, list(s)] for n, s in result.repair]
    doc["seconds"] = result.seconds
    return doc


def _result_from_json(doc: Mapping[str, Any]) -> TableResult:
    return TableResult(
        table=doc["table"], status=doc["status"], rows=doc["rows"], chunks=doc["chunks"],
        differing_chunks=tuple(sorted(doc["differing_chunks"].items())),
        differing_rows=tuple(sorted(doc["differing_rows"].items())),
        differences=tuple(Difference(d["replica"], d["kind"],
                                     tuple((c, decode_value(v)) for c, v in d["key"]))
                          for d in doc["differences"]),
        seconds=float(doc["seconds"]), reason=doc["reason"],
        resumed_from_chunk=doc["resumed_from_chunk"],
        repair=tuple((n, tuple(s)) for n, s in doc["repair"]), notes=tuple(doc["notes"]),
        rechecked_chunks=int(doc.get("rechecked_chunks", 0)),
        whole_table=bool(doc.get("whole_table", False)))


# --------------------------------------------------------------------------- entry point


def run_checksum(source: Target, replicas: Sequence[Target],
                 options: ChecksumOptions, reporter: Reporter | None = None) -> DriftResult:
    """Compare `replicas` with `source`; raises DbgaugeError when nothing can be checked
    (unreachable server, unknown table, replication stopped, missing privilege)."""
    if not replicas:
        raise ConfigError("give at least one --replica")
    if options.method is not None and options.method not in METHODS:
        raise ConfigError(f"--method {options.method!r}: use replicated or direct")
    check_kinds([source, *replicas])
    reporter = reporter or LogReporter()
    started = time.monotonic()
    with ExitStack() as stack:
        run = _Run(source, replicas, options, reporter, stack)
        for link in run.links.values():
            link.check()
        tables = run.tables()  # unknown or unreadable tables fail before anything is written
        if run.method == "replicated":
            _prepare_replicated(run.source)
        run.started = time.monotonic()  # --run-time counts checking, not connecting
        try:
            results = _check_tables(run, tables)
        except KeyboardInterrupt:
            run.state.save(force=True)
            raise Interrupted(f"interrupted; progress is saved in {run.state.path}: continue "
                              "with --resume") from None
        run.state.complete()
        return DriftResult(run.method, run.source.name, tuple(r.name for r in run.replicas),
                           tuple(results), time.monotonic() - started, tuple(run.notes))


def _check_tables(run: _Run, tables: list[tuple[str, str, int, bool]]) -> list[TableResult]:
    results: list[TableResult] = []
    for schema, table, estimate, readable in tables:
        name = f"{schema}.{table}"
        previous = run.state.finished(name)
        if previous is not None:
            results.append(replace(previous, notes=(*previous.notes,
                                                    "result kept from the resumed run")))
            continue
        if not readable:
            results.append(TableResult(name, "unchecked", reason=(
                f"no privilege to read it on {run.source.name}: "
                f"{_grant_hint(run.source, name)}")))
            continue
        results.append(run.check_table(schema, table, estimate))
    return results


def _prepare_replicated(source: Side) -> None:
    """Session binlog_format=STATEMENT and dbgauge.checksums, or a clear error."""
    try:
        source.q("checksum_binlog_format")
    except QueryError as exc:
        if denied(exc):
            raise DriftError(
                f"the replicated method needs the privilege to set the session binlog_format "
                f"on source {source.name} (MariaDB: BINLOG ADMIN or SUPER; MySQL 8: "
                "SESSION_VARIABLES_ADMIN or SYSTEM_VARIABLES_ADMIN), which this user lacks: "
                "grant it, or use --method direct (read-only)") from None
        raise
    try:
        for statement in load_sql("schema", "mysql_checksums").split(";"):
            if statement.strip():
                source.run((statement.strip(), ()))
    except QueryError as exc:
        raise DriftError(
            f"cannot create dbgauge.checksums on source {source.name}: {redact(str(exc))}; "
            "the replicated method needs CREATE, INSERT, UPDATE, DELETE and SELECT on the "
            "dbgauge schema (or use --method direct)") from None



def render_text(result: DriftResult) -> str:
    """The per-table summary the CLI prints (JSON is `result.to_json()`)."""
    lines = [f"checksum of {', '.join(result.replicas)} against {result.source} "
             f"(method {result.method})"]
    width = max([len("TABLE"), *(len(t.table) for t in result.tables)])
    lines.append(f"{'TABLE':<{width}}  {'ROWS':>10}  {'CHUNKS':>6}  {'DIFF_CHUNKS':>11}  "
                 f"{'DIFF_ROWS':>9}  {'TIME':>7}  STATUS")
    for t in result.tables:
        chunks = sum(n for _, n in t.differing_chunks)
        rows = sum(n for _, n in t.differing_rows)
        lines.append(f"{t.table:<{width}}  {t.rows:>10}  {t.chunks:>6}  {chunks:>11}  "
                     f"{rows:>9}  {t.seconds:>6.2f}s  {t.status}")
        if t.reason:
            lines.append(f"  {t.reason}")
        for d in t.differences:
            lines.append(f"  {d.replica}: {d.kind} {d.key_text()}")
        shown = {name: 0 for name, _ in t.differing_rows}
        for d in t.differences:
            shown[d.replica] = shown.get(d.replica, 0) + 1
        for name, count in t.differing_rows:
            if count > shown.get(name, 0):
                lines.append(f"  {name}: ... and {count - shown[name]} more rows")
        lines += [f"  note: {n}" for n in t.notes]
    lines += [f"note: {n}" for n in result.notes]
    for t in result.tables:
        for _replica, statements in t.repair:
            lines.append("")
            lines += statements
    drifted = [t for t in result.tables if t.status == "drift"]
    unchecked = [t for t in result.tables if t.status == "unchecked"]
    verdict = {"ok": "no drift", "drift": f"DRIFT in {len(drifted)} table(s)",
               "error": f"{len(unchecked)} table(s) could not be checked"}[result.status]
    lines.append(f"{verdict} ({len(result.tables)} table(s), {result.seconds:.2f} s)")
    return "\n".join(lines)
