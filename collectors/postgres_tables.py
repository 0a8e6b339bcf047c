"""postgres_tables: every column of pg_stat_user_tables and pg_statio_user_tables.

Per user table: scans and the rows they read, rows inserted/updated/deleted (HOT and, on
16+, new-page updates), live and dead rows, rows changed since the last analyze and
inserted since the last vacuum, how often and (18+) how long it was vacuumed and
analyzed, by hand and by autovacuum, and how long ago; how long ago it was last scanned
(16+); its size (heap with TOAST, indexes); and block reads and buffer hits of its heap,
indexes, TOAST table and TOAST index. Dead tuples that keep growing while the last
autovacuum gets older is the classic sign of a blocked or starved autovacuum.

The top `limit` tables of each database (most dead tuples, then largest); the default is
generous (postgres_exporter exports every table), and `dbgauge_postgres_tables_not_exported`
says how many were left out. PostgreSQL keeps these statistics per database: `databases`
reads other databases of the server too (see `collectors/_pg_databases.py`), and
`dbgauge_postgres_tables_database_success` says which were read. A NULL (no index, no
TOAST table, never vacuumed) gives no series; `dbgauge_postgres_tables` is always there.
A table another session holds (or waits for) an ACCESS EXCLUSIVE lock on costs only its
size: it is not sized, and `dbgauge_postgres_tables_unsized` counts it, where waiting for
the lock would have failed the whole collector at lock_timeout.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.collectors._pg_databases import OPTIONS, DatabaseRead, Selection, read_databases
from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, numbers, text
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    MetricType,
    Option,
    Sample,
    column_samples,
)

_P = "dbgauge_postgres_table_"
_L = ("database", "schema", "table")
_SRC, _IO = "pg_stat_user_tables", "pg_statio_user_tables"
DEFAULT_LIMIT = 5000


def _col(name: str, type_: MetricType, help_: str, column: str, scale: float = 1.0) -> Column:
    return Column(MetricSpec(_P + name, type_, help_, _L), column, scale)


def _counter(name: str, what: str, column: str, view: str = _SRC) -> Column:
    return _col(name, "counter", f"{what} ({view}.{column}).", column)


def _age(event: str, what: str, column: str) -> Column:
    """Seconds since the event (now - last_<event>); absent if never."""
    return _col(f"last_{event}_age_seconds", "gauge", f"Seconds since the table was last "
                f"{what} (now - {_SRC}.{column}); absent if never.", column + "_age")


TUPLES = (
    _col("dead_tuples", "gauge", f"Estimated dead rows, which vacuum reclaims "
         f"({_SRC}.n_dead_tup).", "n_dead_tup"),
    _col("live_tuples", "gauge", f"Estimated live rows ({_SRC}.n_live_tup).", "n_live_tup"),
    _col("modified_since_analyze_tuples", "gauge", f"Estimated rows changed since the last "
         f"analyze ({_SRC}.n_mod_since_analyze).", "n_mod_since_analyze"),
    _col("inserted_since_vacuum_tuples", "gauge", f"Estimated rows inserted since the last "
         f"vacuum ({_SRC}.n_ins_since_vacuum).", "n_ins_since_vacuum"),
    _col("size_bytes", "gauge", "Disk space of the table with its indexes and TOAST "
         "(pg_total_relation_size).", "size_bytes"),
    _col("data_size_bytes", "gauge", "Disk space of the table without its indexes: heap, "
         "TOAST, free space and visibility maps (pg_table_size).", "table_bytes"),
    _col("indexes_size_bytes", "gauge", "Disk space of the table's indexes "
         "(pg_indexes_size).", "indexes_bytes"),
    _counter("seq_scans_total", "Sequential scans started on the table", "seq_scan"),
    _counter("seq_tuples_read_total", "Live rows fetched by sequential scans", "seq_tup_read"),
    _counter("index_scans_total", "Index scans started on the table; absent for a table "
             "without indexes", "idx_scan"),
    _counter("index_tuples_fetched_total", "Live rows fetched by index scans; absent for a "
             "table without indexes", "idx_tup_fetch"),
    _counter("tuples_inserted_total", "Rows inserted", "n_tup_ins"),
    _counter("tuples_updated_total", "Rows updated, HOT and new-page updates included",
             "n_tup_upd"),
    _counter("tuples_deleted_total", "Rows deleted", "n_tup_del"),
    _counter("tuples_hot_updated_total", "Rows HOT-updated (no index entry written)",
             "n_tup_hot_upd"),
    _counter("tuples_newpage_updated_total", "Rows updated onto a new heap page, "
             "PostgreSQL 16+", "n_tup_newpage_upd"),
)
MAINTENANCE = (
    _counter("vacuums_total", "Manual vacuums of the table, VACUUM FULL not counted",
             "vacuum_count"),
    _counter("autovacuums_total", "Vacuums of the table by autovacuum", "autovacuum_count"),
    _counter("analyzes_total", "Manual analyzes of the table", "analyze_count"),
    _counter("autoanalyzes_total", "Analyzes of the table by autovacuum",
             "autoanalyze_count"),
    *(_col(f"{kind}_seconds_total", "counter", f"Time spent in {what} of the table, "
           f"PostgreSQL 18+ ({_SRC}.total_{kind}_time).", f"total_{kind}_time", 0.001)
      for kind, what in (("vacuum", "manual vacuums"), ("autovacuum", "autovacuum's vacuums"),
                         ("analyze", "manual analyzes"),
                         ("autoanalyze", "autovacuum's analyzes"))),
    _age("vacuum", "vacuumed by hand (VACUUM)", "last_vacuum"),
    _age("autovacuum", "vacuumed by autovacuum", "last_autovacuum"),
    _age("analyze", "analyzed by hand (ANALYZE)", "last_analyze"),
    _age("autoanalyze", "analyzed by autovacuum", "last_autoanalyze"),
    _age("seq_scan", "read by a sequential scan, PostgreSQL 16+", "last_seq_scan"),
    _age("index_scan", "read by an index scan, PostgreSQL 16+", "last_idx_scan"),
)
IO = tuple(
    _counter(f"{part}_blocks_{event}_total", f"{what} {where}", f"{prefix}_blks_{event}", _IO)
    for part, prefix, where in (
        ("heap", "heap", "of the table's heap"),
        ("index", "idx", "of all the table's indexes; absent without indexes"),
        ("toast", "toast", "of the table's TOAST table; absent without one"),
        ("toast_index", "tidx", "of the table's TOAST index; absent without one"))
    for event, what in (("read", "Disk blocks read"), ("hit", "Buffer hits")))
_D = ("database",)
COUNT = MetricSpec("dbgauge_postgres_tables", "gauge",
                   f"User tables in the database ({_SRC}), exported or not.", _D)
NOT_EXPORTED = MetricSpec("dbgauge_postgres_tables_not_exported", "gauge",
                          "User tables of the database left out by the `limit` option "
                          "(those with the fewest dead tuples, then the smallest).", _D)
UNSIZED = MetricSpec(
    "dbgauge_postgres_tables_unsized", "gauge",
    "User tables of the database whose size was not read this time: another session held "
    "or waited for an ACCESS EXCLUSIVE lock on the table, its TOAST table or an index of "
    "either (ALTER TABLE, TRUNCATE, VACUUM FULL, REINDEX, LOCK); they have no size series.",
    _D)
DATABASE_SUCCESS = MetricSpec(
    "dbgauge_postgres_tables_database_success", "gauge",
    "1 if the database's tables were read during this collection, else 0 (see the "
    "`databases` option; the log says why).", _D)

METRICS = MetricTable(COUNT, NOT_EXPORTED, UNSIZED, DATABASE_SUCCESS, *TUPLES, *MAINTENANCE, *IO)
# Columns that hold a point in time (Unix seconds): the facts keep them, and their ages.
TIMES = ("last_vacuum", "last_autovacuum", "last_analyze", "last_autoanalyze",
         "last_seq_scan", "last_idx_scan")
_NUMERIC = tuple(c for c in METRICS.column_names if not c.endswith("_age")) + TIMES


@dataclass(frozen=True)
class TableStats:
    """One `tables` row: its numbers by column (NULLs left out), points in time as Unix
    seconds, and their ages (`<column>_age`, clamped at 0) as of the statement."""

    schema: str
    table: str
    values: Mapping[str, float]


@dataclass(frozen=True)
class DatabaseTables:
    """One database's top tables, most dead tuples first, how many it has in all, and how
    many of them were not sized for another session's lock."""

    database: str
    tables: tuple[TableStats, ...] = ()
    total: float = 0.0
    unsized: float = 0.0


@dataclass(frozen=True)
class PgTablesFacts:
    """Each database tried: its tables, or the reason it was not read."""

    databases: tuple[DatabaseRead[DatabaseTables], ...]


def parse_table(row: Row) -> TableStats:
    """A `tables` row -> TableStats."""
    values = numbers(row, _NUMERIC)
    if "table_bytes" in values and "indexes_bytes" in values:
        values["size_bytes"] = values["table_bytes"] + values["indexes_bytes"]
    now = number(row.get("now"))
    for column in TIMES:
        if now is not None and column in values:
            values[column + "_age"] = max(0.0, now - values[column])
    return TableStats(text(row.get("schemaname")), text(row.get("relname")), values)


def parse_database(rows: Iterable[Row], database: str = "") -> DatabaseTables:
    """`tables` rows -> DatabaseTables; the counts ride on every row (none: 0)."""
    rows = list(rows)
    first = rows[0] if rows else {}
    name = text(first.get("datname")) if rows else database
    return DatabaseTables(name or database, tuple(parse_table(r) for r in rows),
                          number(first.get("tables")) or 0.0,
                          number(first.get("unsized")) or 0.0)


def table_samples(facts: PgTablesFacts) -> Iterator[Sample]:
    """Per database: whether it was read, its counts, then per-table samples."""
    for outcome in facts.databases:
        db = {"database": outcome.database}
        yield Sample(DATABASE_SUCCESS.name, 0.0 if outcome.facts is None else 1.0, db)
        if outcome.facts is None:
            continue
        yield Sample(COUNT.name, outcome.facts.total, db)
        yield Sample(NOT_EXPORTED.name,
                     max(0.0, outcome.facts.total - len(outcome.facts.tables)), db)
        yield Sample(UNSIZED.name, outcome.facts.unsized, db)
        for t in outcome.facts.tables:
            labels = {**db, "schema": t.schema, "table": t.table}
            yield from column_samples(METRICS.columns, t.values, labels)


class PostgresTables(Collector[PgTablesFacts]):
    name = "postgres_tables"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("User tables of each database (every column of pg_stat_user_tables and "
            "pg_statio_user_tables, sizes), the most dead tuples first, up to `limit`; "
            "other databases of the server with `databases`.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS
    options = {"limit": Option(DEFAULT_LIMIT, "How many tables to export per database "
                                              "(most dead tuples, then largest, first)",
                               maximum=1_000_000), **OPTIONS}

    def read(self, conn: Connection) -> PgTablesFacts:
        limit = (int(self.setting("limit")),)
        return PgTablesFacts(read_databases(
            conn, Selection.of(self.setting),
            lambda c: parse_database(c.query("tables", limit))))

    def samples(self, facts: PgTablesFacts) -> Iterable[Sample]:
        return table_samples(facts)
