"""postgres_tables: the user tables of the connected database most in need of vacuum.

The top `limit` tables by dead tuples, then by size: live and dead tuples, size, sequential
and index scans, and how long ago each was last vacuumed and analyzed, by hand and by
autovacuum. Dead tuples that keep growing while the last autovacuum gets older is the
classic sign of a blocked or starved autovacuum. Only the connected database: PostgreSQL
keeps these statistics per database. A never-vacuumed table has no `..._age_seconds`
series, and a table without indexes no index-scan series; `dbgauge_postgres_tables` is
always there and counts them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.collectors.postgres_checkpoints import age
from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Option,
    Sample,
    column_samples,
    present,
)

_P = "dbgauge_postgres_table_"
_L = ("schema", "table")
_SRC = "pg_stat_user_tables"

DEAD = MetricSpec(_P + "dead_tuples", "gauge",
                  f"Estimated dead rows, which vacuum reclaims ({_SRC}.n_dead_tup).", _L)
LIVE = MetricSpec(_P + "live_tuples", "gauge", f"Estimated live rows ({_SRC}.n_live_tup).", _L)
SIZE = MetricSpec(_P + "size_bytes", "gauge",
                  "Disk space of the table with its indexes and TOAST "
                  "(pg_total_relation_size).", _L)
SEQ_SCANS = MetricSpec(_P + "seq_scans_total", "counter",
                       f"Sequential scans started on the table ({_SRC}.seq_scan).", _L)
IDX_SCANS = MetricSpec(_P + "index_scans_total", "counter",
                       f"Index scans started on the table ({_SRC}.idx_scan); absent for a "
                       f"table without indexes.", _L)
COUNT = MetricSpec("dbgauge_postgres_tables", "gauge",
                   f"User tables in the connected database ({_SRC}), exported or not.")


def _age(event: str, what: str) -> Column:
    """Seconds since the event, from the statement's last_<event>_age; absent if never."""
    return Column(MetricSpec(f"{_P}last_{event}_age_seconds", "gauge",
                             f"Seconds since the table was last {what} (now - "
                             f"{_SRC}.last_{event}); absent if never.", _L), f"last_{event}_age")


METRICS = MetricTable(
    COUNT, DEAD, LIVE, SIZE, SEQ_SCANS, IDX_SCANS,
    _age("vacuum", "vacuumed by hand (VACUUM)"), _age("autovacuum", "vacuumed by autovacuum"),
    _age("analyze", "analyzed by hand (ANALYZE)"), _age("autoanalyze", "analyzed by autovacuum"))


@dataclass(frozen=True)
class TableStats:
    """One `tables` row: None where PostgreSQL reports NULL (never vacuumed, no index)."""

    schema: str
    table: str
    live_tuples: float | None
    dead_tuples: float | None
    size_bytes: float | None
    seq_scans: float | None
    index_scans: float | None
    ages: Mapping[str, float]  # by `tables` column (last_vacuum_age...), only those not NULL


@dataclass(frozen=True)
class PgTablesFacts:
    """The top tables, most dead tuples first, and how many there are in all."""

    tables: tuple[TableStats, ...]
    total: float = 0.0


def parse_tables(rows: Iterable[Row]) -> tuple[TableStats, ...]:
    """`tables` rows -> TableStats, in row order."""
    return tuple(TableStats(
        text(row.get("schemaname")), text(row.get("relname")),
        number(row.get("n_live_tup")), number(row.get("n_dead_tup")),
        number(row.get("size_bytes")), number(row.get("seq_scan")),
        number(row.get("idx_scan")),
        {column: seconds for column in METRICS.column_names
         if (seconds := age(row.get(column))) is not None}) for row in rows)


def parse_facts(rows: Iterable[Row]) -> PgTablesFacts:
    """`tables` rows -> PgTablesFacts; the count rides on every row (none: 0)."""
    rows = list(rows)
    return PgTablesFacts(parse_tables(rows), number(rows[0].get("tables")) or 0.0
                         if rows else 0.0)


def table_samples(facts: PgTablesFacts) -> Iterator[Sample]:
    """The count, then per-table samples; NULL values give none."""
    yield Sample(COUNT.name, facts.total)
    for t in facts.tables:
        labels = {"schema": t.schema, "table": t.table}
        yield from present(((DEAD, t.dead_tuples), (LIVE, t.live_tuples), (SIZE, t.size_bytes),
                            (SEQ_SCANS, t.seq_scans), (IDX_SCANS, t.index_scans)), labels)
        yield from column_samples(METRICS.columns, t.ages, labels)


class PostgresTables(Collector[PgTablesFacts]):
    name = "postgres_tables"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Top user tables of the connected database by dead tuples, then size: live and "
            "dead tuples, size, scans, and the age of the last (auto)vacuum and "
            "(auto)analyze.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS
    options = {"limit": Option(50, "How many tables to export (most dead tuples, then "
                                   "largest, first).", maximum=1000)}

    def read(self, conn: Connection) -> PgTablesFacts:
        return parse_facts(conn.query("tables", (int(self.setting("limit")),)))

    def samples(self, facts: PgTablesFacts) -> Iterable[Sample]:
        return table_samples(facts)
