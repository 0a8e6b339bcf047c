"""mysql_tables: the busiest and the largest tables (MySQL and MariaDB).

Two reads, each bounded to a top N so the label set stays bounded however many tables a
server has:

- table I/O from performance_schema.table_io_waits_summary_by_table, the `limit` tables
  with the most wait time: waits (row operations) and wait seconds per operation (fetch,
  insert, update, delete). Absent while performance_schema is off
  (`dbgauge_mysql_performance_schema_enabled`, from mysql_statements, says so).
- sizes from information_schema.TABLES, the `size_limit` largest base tables by data +
  index bytes: data, index and free bytes and the estimated row count.

System schemas (mysql, performance_schema, information_schema, sys) are left out of both
of dbgauge's own families, and only base tables have sizes. The facts hold what
mysqld_exporter's perf_schema.tableiowaits and info_schema.tables export too (everything
outside mysql and performance_schema, resp. outside mysql, performance_schema and
information_schema; views; each table's type, engine, version, row format and create
options), for its dialect. Both limits default to 1000 (mysqld_exporter has none); the
`..._truncated` gauges say when tables were left out.

A monitoring account without SELECT on performance_schema loses the I/O families only: the
sizes are still exported, and the collector is reported failed (`dbgauge_collector_success`
0, the log naming the GRANT), with no I/O series rather than zeros. information_schema.TABLES
lists only the tables the account holds a privilege on, so the sizes are checked against
InnoDB's own list (PROCESS): tables hidden from the account are counted, the truncation
gauge says tables were left out, and the collector fails naming `SELECT ON *.*`; without
PROCESS it cannot tell, and fails saying so rather than present a partial top N as whole.

information_schema.TABLES is the slow one with many tables: MariaDB asks every table's
engine for its statistics. It is bounded three ways: only base tables outside the system
schemas, only `size_limit` rows come back (ORDER BY ... LIMIT on the server), and the
statement runs under the target's `query_timeout` (max_statement_time on MariaDB,
max_execution_time on MySQL), so a slow dictionary fails this collector for that scrape
(`dbgauge_collector_success` 0) instead of holding the scrape. MySQL 8 answers it from
cached data-dictionary statistics (refreshed every information_schema_stats_expiry).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PROCESS, PS_SELECT, denied, query
from dbgauge.toolkit.db.values import number, numbers, text
from dbgauge.toolkit.errors import Incomplete, QueryError
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Option,
    Sample,
    column_samples,
)

PICOSECONDS = 1e-12
OPERATIONS = ("fetch", "insert", "update", "delete")
_IO_LABELS = ("schema", "table", "operation")
_TABLE = ("schema", "table")
_IO_SRC = "performance_schema.table_io_waits_summary_by_table"

IO_WAITS = MetricSpec(
    "dbgauge_mysql_table_io_waits_total", "counter",
    f"Row operations that waited on table I/O, by operation, for the top N tables by wait "
    f"time ({_IO_SRC}.COUNT_FETCH/_INSERT/_UPDATE/_DELETE).", _IO_LABELS)
IO_WAIT_SECONDS = MetricSpec(
    "dbgauge_mysql_table_io_wait_seconds_total", "counter",
    f"Time spent in table I/O, by operation, for the top N tables by wait time "
    f"({_IO_SRC}.SUM_TIMER_*; 0 while the table I/O instrument is not timed).", _IO_LABELS)
IO_TRUNCATED = MetricSpec(
    "dbgauge_mysql_table_io_truncated", "gauge",
    "1 when more tables had I/O waits than the `limit` option (the rest left out), else 0.")
SIZES_TRUNCATED = MetricSpec(
    "dbgauge_mysql_table_sizes_truncated", "gauge",
    "1 when there were more tables than the `size_limit` option (the smallest left out), "
    "else 0.")
HIDDEN = MetricSpec(
    "dbgauge_mysql_tables_hidden", "gauge",
    "InnoDB tables outside the system schemas that information_schema.TABLES does not show "
    "the monitoring account (it lists only tables the account holds a privilege on), so "
    "their sizes are missing: counted from information_schema.INNODB_SYS_TABLES (MariaDB) "
    "or INNODB_TABLES (MySQL), which need PROCESS.")
SYSTEM_SCHEMAS = frozenset({"mysql", "performance_schema", "information_schema", "sys"})
HIDDEN_GRANT = "GRANT SELECT ON *.* TO ... (or SELECT on their schemas)"
METRICS = MetricTable(
    IO_WAITS, IO_WAIT_SECONDS, IO_TRUNCATED, SIZES_TRUNCATED, HIDDEN,
    Column(MetricSpec(
        "dbgauge_mysql_table_data_bytes", "gauge",
        "Data size of the table, for the top N tables by data + index bytes "
        "(information_schema.TABLES.DATA_LENGTH; InnoDB: clustered index pages).", _TABLE),
        "data_length"),
    Column(MetricSpec(
        "dbgauge_mysql_table_index_bytes", "gauge",
        "Secondary index size of the table (information_schema.TABLES.INDEX_LENGTH).", _TABLE),
        "index_length"),
    Column(MetricSpec(
        "dbgauge_mysql_table_free_bytes", "gauge",
        "Allocated but unused bytes of the table or its tablespace "
        "(information_schema.TABLES.DATA_FREE).", _TABLE), "data_free"),
    Column(MetricSpec(
        "dbgauge_mysql_table_rows", "gauge",
        "Estimated row count (information_schema.TABLES.TABLE_ROWS): an estimate from sampled "
        "statistics for InnoDB, exact for MyISAM; refreshed when the engine updates its "
        "statistics (ANALYZE TABLE forces it).", _TABLE), "table_rows"),
)


@dataclass(frozen=True)
class TableIO:
    """One table's I/O: (count, picoseconds) by operation; NULL columns left out."""

    schema: str
    table: str
    counts: Mapping[str, float]
    picoseconds: Mapping[str, float]


@dataclass(frozen=True)
class TableSize:
    """One table's sizes by column (data_length, index_length, data_free, table_rows; NULL
    left out), its TABLE_TYPE, and ENGINE, VERSION, ROW_FORMAT, CREATE_OPTIONS as read
    (None for NULL)."""

    schema: str
    table: str
    values: Mapping[str, float]
    type: str = "BASE TABLE"
    engine: str | None = None
    version: float | None = None
    row_format: str | None = None
    create_options: str | None = None


@dataclass(frozen=True)
class TablesFacts:
    io: tuple[TableIO, ...]
    sizes: tuple[TableSize, ...]
    io_truncated: bool = False
    sizes_truncated: bool = False
    io_error: str = ""  # the I/O read was refused (no SELECT on performance_schema)
    hidden: int | None = None  # InnoDB tables the account cannot see (None: cannot tell)
    hidden_error: str = ""  # why some sizes are missing, or why that cannot be told

    @property
    def error(self) -> str:
        """What the account could not see, with the grants to run ("" when nothing)."""
        return "; ".join(e for e in (self.io_error, self.hidden_error) if e)


def _text_or_none(value: object) -> str | None:
    return None if value is None else text(value)


def parse_io(rows: Iterable[Row], limit: int) -> tuple[TableIO, ...]:
    """`table_io_waits` rows -> at most `limit` TableIO."""
    out: list[TableIO] = []
    for row in rows:
        if len(out) >= limit:
            break
        counts = {op: v for op in OPERATIONS
                  for v in [number(row.get(f"count_{op}"))] if v is not None}
        times = {op: v for op in OPERATIONS
                 for v in [number(row.get(f"timer_{op}"))] if v is not None}
        out.append(TableIO(text(row.get("table_schema")), text(row.get("table_name")),
                           counts, times))
    return tuple(out)


def parse_sizes(rows: Iterable[Row], limit: int) -> tuple[TableSize, ...]:
    """`table_sizes` rows -> at most `limit` TableSize (NULL sizes left out)."""
    out: list[TableSize] = []
    for row in rows:
        if len(out) >= limit:
            break
        out.append(TableSize(text(row.get("table_schema")), text(row.get("table_name")),
                             numbers(row, METRICS.column_names),
                             text(row.get("table_type")) or "BASE TABLE",
                             _text_or_none(row.get("engine")), number(row.get("version")),
                             _text_or_none(row.get("row_format")),
                             _text_or_none(row.get("create_options"))))
    return tuple(out)


def table_samples(facts: TablesFacts) -> Iterator[Sample]:
    """The samples; raises Incomplete after them when the I/O part was refused."""
    if not facts.io_error:
        yield Sample(IO_TRUNCATED.name, 1.0 if facts.io_truncated else 0.0)
    # hidden tables are left out too; unknown whether any are, it is not said that none is
    left_out = facts.sizes_truncated or bool(facts.hidden)
    if facts.hidden is not None or left_out:
        yield Sample(SIZES_TRUNCATED.name, 1.0 if left_out else 0.0)
    if facts.hidden is not None:
        yield Sample(HIDDEN.name, float(facts.hidden))
    for io in facts.io:
        if io.schema in SYSTEM_SCHEMAS:
            continue
        for op in OPERATIONS:
            labels = {"schema": io.schema, "table": io.table, "operation": op}
            if op in io.counts:
                yield Sample(IO_WAITS.name, io.counts[op], labels)
            if op in io.picoseconds:
                yield Sample(IO_WAIT_SECONDS.name, io.picoseconds[op] * PICOSECONDS, labels)
    for size in facts.sizes:
        if size.schema in SYSTEM_SCHEMAS or size.type != "BASE TABLE":
            continue
        yield from column_samples(METRICS.columns, size.values,
                                  {"schema": size.schema, "table": size.table})
    if facts.error:
        raise Incomplete(facts.error)


def read_hidden(conn: Connection) -> tuple[int | None, str]:
    """How many InnoDB tables information_schema.TABLES hides from this account, and the
    line saying so with the grant (None and the PROCESS line when that cannot be told)."""
    try:
        (row,) = query(conn, "tables_hidden", PROCESS)
    except QueryError as exc:
        if not denied(exc):
            raise
        return None, f"cannot tell whether tables are hidden from the sizes: {exc}"
    hidden = max(0, int(number(row.get("innodb_tables")) or 0)
                 - int(number(row.get("visible_tables")) or 0))
    if not hidden:
        return 0, ""
    return hidden, (f"{hidden} InnoDB table(s) outside the system schemas are not in "
                    f"information_schema.TABLES for this account, so their sizes are "
                    f"missing: {HIDDEN_GRANT}")


def read_io(conn: Connection, limit: int) -> tuple[list[Row], str]:
    """The table I/O rows, or none and the error when performance_schema is refused."""
    try:
        return query(conn, "table_io_waits", PS_SELECT, (limit + 1,)), ""
    except QueryError as exc:
        if not denied(exc):
            raise
        return [], str(exc)


class MySQLTables(Collector[TablesFacts]):
    name = "mysql_tables"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Table I/O waits per operation (performance_schema, top N by wait time) and table "
            "sizes and estimated rows (information_schema.TABLES, top N by data + index "
            "bytes); system schemas left out.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    options = {
        "limit": Option(1000, "How many tables for I/O waits, the most waited on.",
                        maximum=100_000),
        "size_limit": Option(1000, "How many tables for sizes, the largest by data + index.",
                             maximum=100_000),
    }

    def read(self, conn: Connection) -> TablesFacts:
        limit, size_limit = int(self.setting("limit")), int(self.setting("size_limit"))
        io_rows, io_error = read_io(conn, limit)
        size_rows = conn.query("table_sizes", (size_limit + 1,))
        hidden, hidden_error = read_hidden(conn)
        return TablesFacts(parse_io(io_rows, limit), parse_sizes(size_rows, size_limit),
                           len(io_rows) > limit, len(size_rows) > size_limit, io_error,
                           hidden, hidden_error)

    def samples(self, facts: TablesFacts) -> Iterable[Sample]:
        return table_samples(facts)

    def incomplete(self, facts: TablesFacts) -> str | None:
        return facts.error or None
