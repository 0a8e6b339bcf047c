"""What a checksum run is asked and what it finds per table: the options, the chunks
that differed, the typed per-table results, the errors that stop a run, and the reporter a
run talks to.

Every other module of the package works with these; the run's one public result is a
`toolkit.result.CheckResult` built from them (`checks.drift.result`), and the --resume
state file stores them (`checks.drift.state`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dbgauge.checks.drift.chunks import KeyRange, json_value
from dbgauge.toolkit.errors import CheckFailed

log = logging.getLogger("dbgauge.checksum")

METHODS = ("replicated", "direct")


class DriftError(CheckFailed):
    """The check could not be done: the message says why and what to do."""


class ReplicationStopped(DriftError):
    """A replica stopped replicating: waiting for it would never end."""


class Interrupted(DriftError):
    """The run stopped early (--run-time or a signal); --resume continues it."""


@dataclass(frozen=True)
class ChecksumOptions:
    """What to compare and how; the CLI and the daemon job both build one."""

    tables: tuple[str, ...] = ()  # schema.table, bare table names or patterns; empty = all
    exclude: tuple[str, ...] = ()  # fnmatch patterns on schema.table (bare: table name)
    method: str | None = None  # None: replicated for MySQL-family replicas, else direct
    chunk_time: float = 0.5
    max_lag: float = 1.0
    max_threads_running: int = 25
    retries: int = 3  # re-checks of a differing chunk/row before it is reported
    retry_delay: float = 0.25
    print_repair: bool = False
    show_values: bool = False  # changed rows: also each differing column's two values
    resume: bool = False
    state_file: Path | None = None
    keep_state: bool = True  # write progress for --resume (the daemon does not)
    run_time: float | None = None  # stop (resumably) after this many seconds
    one_chunk_max_rows: int = 100_000  # keyless tables up to this size: one chunk
    leaf_rows: int = 10_000  # bisection stops and compares rows (key, MD5) at this size
    split_factor: int = 16
    initial_chunk_rows: int = 1000
    wait_timeout: float = 60.0  # for a replica to reach the source's position
    # longest pause for lag/load before giving up (--max-wait); it also bounds how long
    # a side may take to answer one statement (connections' timeouts, checks/drift/context)
    max_pause: float = 600.0
    max_differences: int = 1000  # keys reported per table and replica (counts stay exact)
    # MariaDB pairs: a table expected to take at most this long, and not written for
    # whole_table_idle seconds, is first compared whole with CHECKSUM TABLE (0: never).
    whole_table_time: float = 2.0
    whole_table_idle: float = 1.0
    # rows/s CHECKSUM TABLE is expected to read (None: measured, checks.drift.whole_table)
    whole_table_rate: float | None = None
    # pt-table-checksum's options (checks/drift/select.py, discover.py, replicate.py):
    databases: tuple[str, ...] = ()  # names or shell patterns; empty = every schema
    ignore_databases: tuple[str, ...] = ()
    databases_regex: str | None = None
    ignore_databases_regex: str | None = None
    tables_regex: str | None = None  # searched in the table name alone, as pt does
    ignore_tables_regex: str | None = None
    chunk_size: int | None = None  # fixed rows per chunk instead of sizing to chunk_time
    max_load: tuple[tuple[str, float | None], ...] = ()  # status variable, limit (None: +20%)
    recursion_method: tuple[str, ...] = ()  # processlist, hosts, dsn=D=db,t=tbl, none
    replicate: str | None = None  # db.tbl of the replicated method (None: dbgauge.checksums)
    replicate_check_only: bool = False  # report what the replicate table holds, no checksum
    # replicated: write the replicate table even on a read_only source (toolkit.write_guard)
    allow_read_only: bool = False
    # PostgreSQL sides connected to databases of different names: compare anyway (a copy
    # under another name); else such a run is refused (checks/drift/run.py).
    different_databases: bool = False


@dataclass(frozen=True)
class Suspect:
    """A chunk that differed on a replica when walked (direct) or whose replica values in
    the replicate table differ from the source's (replicated): to re-check, and bisect
    down to rows if it still differs."""

    replica: str
    rng: KeyRange
    # direct walk over an integer key: the chunk's key buckets whose hashes differed, the
    # only parts to read again (None: not known, e.g. a resumed run; read the bucket hashes)
    pieces: tuple[KeyRange, ...] | None = None


@dataclass(frozen=True)
class Difference:
    """One row that differs on one replica: missing there, extra there, or changed."""

    replica: str
    kind: str
    key: tuple[tuple[str, Any], ...]
    # changed rows: the replica's columns that differ, and (--show-values only) for each
    # (column, source value, replica value) as JSON values
    columns: tuple[str, ...] = ()
    values: tuple[tuple[str, Any, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"replica": self.replica, "kind": self.kind,
                               "key": self.key_json()}
        if self.kind == "changed":
            doc["columns"] = list(self.columns)
        if self.values:
            doc["values"] = {c: {"source": s, "replica": r} for c, s, r in self.values}
        return doc

    def key_json(self) -> dict[str, Any]:
        return {col: json_value(value) for col, value in self.key}

    def key_text(self) -> str:
        return ", ".join(f"{col}={json_value(value)}" for col, value in self.key)


@dataclass(frozen=True)
class Unnamed:
    """A table without a usable key that differs on `replica`: it was compared as one
    chunk, so only its row counts and checksum are known, never which rows differ (counts
    None: the replicated checksums differed, and the rows matched when re-checked)."""

    replica: str
    source_rows: int | None
    replica_rows: int | None

    def detail(self) -> str:
        if self.source_rows is None or self.replica_rows is None:
            what = "the checksums computed through replication differ"
        elif self.source_rows != self.replica_rows:
            what = (f"{self.source_rows} rows on the source, {self.replica_rows} on "
                    f"{self.replica}")
        else:
            what = f"{self.source_rows} rows on both, checksums differ"
        return (f"compared as one chunk: {what}; without a primary key or unique NOT NULL "
                "key its rows cannot be named")

    def to_json(self) -> dict[str, Any]:
        return {"replica": self.replica, "compared_as": "one chunk",
                "source_rows": self.source_rows, "replica_rows": self.replica_rows,
                "detail": self.detail()}


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
    unnamed: tuple[Unnamed, ...] = ()  # keyless table: replicas it differs on, rows unnamed

    @classmethod
    def unchecked(cls, table: str, reason: str, rows: int = 0) -> TableResult:
        """A table that could not be compared, and why."""
        return cls(table=table, status="unchecked", rows=rows, reason=reason)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table, "status": self.status, "rows": self.rows,
            "chunks": self.chunks, "differing_chunks": dict(self.differing_chunks),
            "differing_rows": dict(self.differing_rows),
            "differences": [d.to_json() for d in self.differences],
            "seconds": round(self.seconds, 3), "reason": self.reason,
            "resumed_from_chunk": self.resumed_from_chunk,
            "rechecked_chunks": self.rechecked_chunks, "whole_table": self.whole_table,
            "notes": list(self.notes),
            "unnamed_differences": [u.to_json() for u in self.unnamed],
        }


class Reporter(Protocol):
    """Progress and notes while a run goes on; the CLI draws a bar, the daemon logs."""

    def plan(self, tables: Sequence[tuple[str, int]]) -> None:
        """The tables ahead, in order, with their estimated rows ('table N of M', ETA)."""

    def progress(self, table: str, rows: int, total: int) -> None:
        """`rows` of an estimated `total` of `table` are done."""

    def note(self, text: str) -> None:
        """Something the operator should know (a pause, a replica compared as is)."""


class LogReporter:
    """Notes to the log at `level`; no progress."""

    def __init__(self, level: int = logging.INFO) -> None:
        self.level = level

    def plan(self, tables: Sequence[tuple[str, int]]) -> None:
        pass

    def progress(self, table: str, rows: int, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        log.log(self.level, "%s", text)
