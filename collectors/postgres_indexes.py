"""postgres_indexes: per user index, block reads and buffer hits (pg_statio_user_indexes)
and scans (pg_stat_user_indexes).

An index read from disk far more than it is hit does not stay in shared_buffers; one never
scanned costs every write and helps no read. Opt-in, as postgres_exporter's
statio_user_indexes collector is. The top `limit` indexes of each database (most block
reads and hits first); `dbgauge_postgres_indexes_not_exported` says how many were left
out, as postgres_tables does for tables, and `databases` reads other databases of the
server the same way (see `collectors/_pg_databases.py`). A NULL gives no series.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dbgauge.collectors._pg_databases import OPTIONS, DatabaseRead, Selection, read_databases
from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, numbers, text
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Option,
    Sample,
    column_samples,
)

_P = "dbgauge_postgres_index_"
_L = ("database", "schema", "table", "index")
_D = ("database",)
DEFAULT_LIMIT = 5000


def _counter(name: str, what: str, column: str, view: str) -> Column:
    return Column(MetricSpec(_P + name, "counter", f"{what} ({view}.{column}).", _L), column)


COLUMNS = (
    _counter("blocks_read_total", "Disk blocks read from the index", "idx_blks_read",
             "pg_statio_user_indexes"),
    _counter("blocks_hit_total", "Buffer hits in the index", "idx_blks_hit",
             "pg_statio_user_indexes"),
    _counter("scans_total", "Index scans started on the index", "idx_scan",
             "pg_stat_user_indexes"),
    _counter("tuples_read_total", "Index entries returned by scans of the index",
             "idx_tup_read", "pg_stat_user_indexes"),
    _counter("tuples_fetched_total", "Live table rows fetched by simple scans of the index",
             "idx_tup_fetch", "pg_stat_user_indexes"),
)
COUNT = MetricSpec("dbgauge_postgres_indexes", "gauge",
                   "User indexes in the database (pg_statio_user_indexes), exported or not.",
                   _D)
NOT_EXPORTED = MetricSpec("dbgauge_postgres_indexes_not_exported", "gauge",
                          "User indexes of the database left out by the `limit` option "
                          "(those with the fewest block reads and hits).", _D)
DATABASE_SUCCESS = MetricSpec(
    "dbgauge_postgres_indexes_database_success", "gauge",
    "1 if the database's indexes were read during this collection, else 0 (see the "
    "`databases` option; the log says why).", _D)
METRICS = MetricTable(COUNT, NOT_EXPORTED, DATABASE_SUCCESS, *COLUMNS)


@dataclass(frozen=True)
class IndexStats:
    """One index: its schema, table and name (None where NULL) and its numbers by column
    (NULLs left out)."""

    schema: str | None
    table: str | None
    index: str | None
    values: Mapping[str, float]


@dataclass(frozen=True)
class DatabaseIndexes:
    """One database's top indexes, how many it has in all, and whether it is the database
    the target's DSN names (the only one postgres_exporter reads)."""

    database: str
    indexes: tuple[IndexStats, ...] = ()
    total: float = 0.0
    connected: bool = False


@dataclass(frozen=True)
class PgIndexesFacts:
    databases: tuple[DatabaseRead[DatabaseIndexes], ...]


def _label(row: Row, column: str) -> str | None:
    return None if row.get(column) is None else text(row.get(column))


def parse_indexes(rows: Iterable[Row], database: str = "",
                  connected: bool = False) -> DatabaseIndexes:
    """`indexes` rows -> DatabaseIndexes; the count rides on every row (none: 0)."""
    rows = list(rows)
    first = rows[0] if rows else {}
    names = tuple(c.column for c in COLUMNS)
    return DatabaseIndexes(
        text(first.get("datname")) or database,
        tuple(IndexStats(_label(r, "schemaname"), _label(r, "relname"),
                         _label(r, "indexrelname"), MappingProxyType(numbers(r, names)))
              for r in rows),
        number(first.get("indexes")) or 0.0, connected)


def index_samples(facts: PgIndexesFacts) -> Iterator[Sample]:
    """Per database: whether it was read, its counts, then per-index samples."""
    for outcome in facts.databases:
        db = {"database": outcome.database}
        yield Sample(DATABASE_SUCCESS.name, 0.0 if outcome.facts is None else 1.0, db)
        if outcome.facts is None:
            continue
        yield Sample(COUNT.name, outcome.facts.total, db)
        yield Sample(NOT_EXPORTED.name,
                     max(0.0, outcome.facts.total - len(outcome.facts.indexes)), db)
        for i in outcome.facts.indexes:
            labels = {**db, "schema": i.schema or "", "table": i.table or "",
                      "index": i.index or ""}
            yield from column_samples(COLUMNS, i.values, labels)


class PostgresIndexes(Collector[PgIndexesFacts]):
    name = "postgres_indexes"
    refresh = 60  # per-object and slow to matter, as postgres_tables
    help = ("User indexes of each database: block reads and buffer hits "
            "(pg_statio_user_indexes), scans (pg_stat_user_indexes), the most read first, "
            "up to `limit`; other databases with `databases`; opt-in.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    default_enabled = False
    metrics = METRICS
    options = {"limit": Option(DEFAULT_LIMIT, "How many indexes to export per database "
                                              "(most block reads and hits first)",
                               maximum=1_000_000), **OPTIONS}

    def read(self, conn: Connection) -> PgIndexesFacts:
        limit = (int(self.setting("limit")),)
        return PgIndexesFacts(read_databases(
            conn, Selection.of(self.setting),
            lambda c: parse_indexes(c.query("indexes", limit), connected=c is conn)))

    def samples(self, facts: PgIndexesFacts) -> Iterable[Sample]:
        return index_samples(facts)
