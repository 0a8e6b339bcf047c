"""postgres_sequences: the sequences of the connected database nearest to running out.

A sequence that reaches its max_value (min_value for a descending one) makes every
following INSERT fail; a `serial` column (int4) gets there after 2^31 rows, which busy
tables do reach. `used_ratio` is how far last_value has gone from the start end towards
the far end, 0 to 1; the top `limit` sequences by that ratio are exported. Cycling
sequences never run out and are left out. PostgreSQL shows last_value only to roles with
USAGE or SELECT on the sequence: `dbgauge_postgres_sequences_unreadable` counts the ones
dbgauge may not read (grant SELECT on them to see their ratio), and a sequence never used
yet has no ratio either. One sequence costs only itself: sequences are read by OID (a
schema without USAGE hides nothing else), and one another session holds or waits for a
lock on (ALTER SEQUENCE, DROP or LOCK in an open transaction) is skipped and counted in
`dbgauge_postgres_sequences_locked` rather than holding the statement until lock_timeout.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample

_P = "dbgauge_postgres_sequence"

USED = MetricSpec(
    _P + "_used_ratio", "gauge",
    "How far the sequence's last_value went towards its end, 0-1: (last_value - min_value) / "
    "(max_value - min_value), mirrored for a negative increment (pg_sequences); absent while "
    "never used or unreadable.", ("schema", "sequence"))
COUNT = MetricSpec(_P + "s", "gauge",
                   "Non-cycling sequences in the connected database (pg_sequences).")
UNREADABLE = MetricSpec(
    _P + "s_unreadable", "gauge",
    "Non-cycling sequences whose last_value dbgauge may not read (no USAGE or SELECT): they "
    "have no used_ratio series.")
LOCKED = MetricSpec(
    _P + "s_locked", "gauge",
    "Non-cycling sequences dbgauge may read but skipped this time: another session held or "
    "waited for a lock that reading them would wait behind (ALTER SEQUENCE, DROP, LOCK); "
    "they have no used_ratio series.")
METRICS = MetricTable(USED, COUNT, UNREADABLE, LOCKED)
LIMIT = Option(50, "How many sequences to export, nearest their end first.", maximum=1000)


@dataclass(frozen=True)
class SequenceUse:
    """One `sequences` row; `used_ratio` None while never used or unreadable."""

    schema: str
    sequence: str
    used_ratio: float | None


@dataclass(frozen=True)
class PgSequencesFacts:
    """The top sequences (nearest their end first) and the database-wide counts:
    `unreadable` for want of a privilege, `locked` skipped for another session's lock."""

    sequences: tuple[SequenceUse, ...]
    total: float
    unreadable: float
    locked: float = 0.0


def parse_sequences(rows: Iterable[Row]) -> PgSequencesFacts:
    """`sequences` rows -> PgSequencesFacts; the counts ride on every row (none: 0)."""
    rows = list(rows)
    first = rows[0] if rows else {}
    return PgSequencesFacts(
        tuple(SequenceUse(text(r.get("schemaname")), text(r.get("sequencename")),
                          number(r.get("used_ratio"))) for r in rows),
        number(first.get("sequences")) or 0.0, number(first.get("unreadable")) or 0.0,
        number(first.get("locked")) or 0.0)


def read_sequences(conn: Connection, limit: int = int(LIMIT.default)) -> PgSequencesFacts:
    """The top `limit` sequences and the counts: one statement."""
    return parse_sequences(conn.query("sequences", (limit,)))


def sequence_samples(facts: PgSequencesFacts) -> Iterator[Sample]:
    """The counts, then a ratio per sequence that has one."""
    yield Sample(COUNT.name, facts.total)
    yield Sample(UNREADABLE.name, facts.unreadable)
    yield Sample(LOCKED.name, facts.locked)
    for seq in facts.sequences:
        if seq.used_ratio is not None:
            yield Sample(USED.name, seq.used_ratio,
                         {"schema": seq.schema, "sequence": seq.sequence})


class PostgresSequences(Collector[PgSequencesFacts]):
    name = "postgres_sequences"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Top sequences of the connected database by how far they went towards their "
            "max_value (min_value when descending); how many exist, how many dbgauge may "
            "not read, and how many another session's lock kept it from reading.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS
    options = {"limit": LIMIT}

    def read(self, conn: Connection) -> PgSequencesFacts:
        return read_sequences(conn, int(self.setting("limit")))

    def samples(self, facts: PgSequencesFacts) -> Iterable[Sample]:
        return sequence_samples(facts)
