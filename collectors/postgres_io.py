"""postgres_io: pg_stat_io (PostgreSQL 16+), I/O by backend type, object and context.

Who reads, writes, extends and fsyncs, and how often a needed block was already in shared
buffers (hits) or had to push another out (evictions; reuses of a ring buffer in the
bulkread, bulkwrite and vacuum contexts). It answers what pg_stat_bgwriter's
buffers_backend and buffers_backend_fsync answered before PostgreSQL 17 dropped them
(`backend_type="client backend"`, writes and fsyncs). Times are reported only while their
timing setting is on (track_io_timing; track_wal_io_timing for the WAL rows of 18+):
otherwise PostgreSQL leaves them at 0, which would read as "no time spent". An operation
that cannot happen for a combination (NULL in the view) has no series. Bytes are the
operations times the block size on 16 and 17 (op_bytes) and PostgreSQL's own counts from 18
(read_bytes, write_bytes, extend_bytes), where one operation may cover several blocks (read
combining): bytes per read is no longer the block size there. On PostgreSQL 15 and older
there is no pg_stat_io: the collector does not run there (nothing reported, and not a
failure).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import is_on, numbers, text
from dbgauge.toolkit.metrics import Collector, Column, MetricSpec, MetricTable, Sample

_P = "dbgauge_postgres_io_"
_L = ("backend_type", "object", "context")


def _ops(name: str, column: str, what: str) -> Column:
    return Column(MetricSpec(_P + name, "counter", f"{what} (pg_stat_io.{column}).", _L),
                  column)


def _time(name: str, column: str, what: str) -> Column:
    return Column(MetricSpec(
        _P + name, "counter", f"{what} (pg_stat_io.{column}); absent while track_io_timing "
        "(track_wal_io_timing for object wal) is off.", _L), column, 0.001)


COUNTS = (
    _ops("reads_total", "reads", "Read operations"),
    _ops("writes_total", "writes", "Write operations"),
    _ops("writebacks_total", "writebacks",
         "Requests to the kernel to write data out to storage"),
    _ops("extends_total", "extends", "Relation extend operations"),
    _ops("hits_total", "hits", "Times a needed block was found in shared buffers"),
    _ops("evictions_total", "evictions",
         "Times a block was written out or dropped from a buffer to make it available"),
    _ops("reuses_total", "reuses",
         "Times a buffer of a size-limited ring (bulkread, bulkwrite, vacuum) was reused"),
    _ops("fsyncs_total", "fsyncs", "fsync calls (only those not handed to the checkpointer)"),
    _ops("read_bytes_total", "read_bytes",
         "Bytes read (reads x op_bytes before PostgreSQL 18; read_bytes from 18)"),
    _ops("write_bytes_total", "write_bytes",
         "Bytes written (writes x op_bytes before PostgreSQL 18; write_bytes from 18)"),
    _ops("extend_bytes_total", "extend_bytes",
         "Bytes extended (extends x op_bytes before PostgreSQL 18; extend_bytes from 18)"),
)
TIMES = (
    _time("read_seconds_total", "read_time", "Time spent in read operations"),
    _time("write_seconds_total", "write_time", "Time spent in write operations"),
    _time("writeback_seconds_total", "writeback_time", "Time spent in writeback operations"),
    _time("extend_seconds_total", "extend_time", "Time spent in extend operations"),
    _time("fsync_seconds_total", "fsync_time", "Time spent in fsync operations"),
)
METRICS = MetricTable(*COUNTS, *TIMES)


@dataclass(frozen=True)
class IoRow:
    """One pg_stat_io row: its labels, the counters PostgreSQL reports for it (NULL ones
    left out; times in milliseconds) and whether its times are measured."""

    backend_type: str
    object: str
    context: str
    values: Mapping[str, float]
    timed: bool

    @property
    def labels(self) -> dict[str, str]:
        return {"backend_type": self.backend_type, "object": self.object,
                "context": self.context}


@dataclass(frozen=True)
class PgIoFacts:
    rows: tuple[IoRow, ...]


def parse_io(rows: Iterable[Row]) -> PgIoFacts:
    """`stat_io` rows -> PgIoFacts."""
    return PgIoFacts(tuple(
        IoRow(text(r.get("backend_type")), text(r.get("object")), text(r.get("context")),
              numbers(r, METRICS.column_names), is_on(r.get("io_timing"))) for r in rows))


def read_io(conn: Connection) -> PgIoFacts:
    return parse_io(conn.query("stat_io"))


def io_samples(facts: PgIoFacts) -> Iterator[Sample]:
    """Counts of every row; times only of rows whose timing is on."""
    for row in facts.rows:
        for column in COUNTS + (TIMES if row.timed else ()):
            value = row.values.get(column.column)
            if value is not None:
                yield Sample(column.spec.name, value * column.scale, row.labels)


class PostgresIo(Collector[PgIoFacts]):
    name = "postgres_io"
    help = ("pg_stat_io (PostgreSQL 16+): reads, writes, writebacks, extends, hits, "
            "evictions, reuses and fsyncs (operations and bytes) by backend type, object and "
            "context, and their times when track_io_timing is on; nothing on 15 and older.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (16,)}
    metrics = METRICS

    def read(self, conn: Connection) -> PgIoFacts:
        return read_io(conn)

    def samples(self, facts: PgIoFacts) -> Iterable[Sample]:
        return io_samples(facts)
