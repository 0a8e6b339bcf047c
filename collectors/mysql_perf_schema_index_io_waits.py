"""mysql_perf_schema_index_io_waits: row operations per index (which index serves the
reads, which is never used, which table is scanned without one).

From performance_schema.table_io_waits_summary_by_index_usage: per (schema, table, index)
the fetches, updates and deletes and their time (picoseconds, exported in seconds); the row
with no index (INDEX_NAME NULL, `index=""` here) counts table scans and holds the inserts,
which only it carries. The mysql and performance_schema schemas are left out. Opt-in, as in
mysqld_exporter (`--collect.perf_schema.indexiowaits`): the label set grows with the
indexes; `limit` (default 1000, the most wait time first) bounds it and `..._truncated`
says when indexes were left out. Needs SELECT on performance_schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from dbgauge.collectors._summary import (
    PICOSECONDS,
    Summary,
    SummaryCollector,
    limit_option,
    truncated_sample,
    truncated_spec,
)
from dbgauge.toolkit.metrics import MetricSpec, MetricTable, Sample

_SRC = "performance_schema.table_io_waits_summary_by_index_usage"
_LABELS = ("schema", "table", "index", "operation")
OPERATIONS = ("fetch", "insert", "update", "delete")
KEYS = ("object_schema", "object_name", "index_name")
COLUMNS = tuple(f"{kind}_{op}" for op in OPERATIONS for kind in ("count", "timer"))
WAITS = MetricSpec("dbgauge_mysql_index_io_waits_total", "counter",
                   f"Row operations per index and operation, for the top N indexes by wait "
                   f"time; index=\"\" is the use without an index (scans, inserts) "
                   f"({_SRC}.COUNT_*).", _LABELS)
WAIT_SECONDS = MetricSpec("dbgauge_mysql_index_io_wait_seconds_total", "counter",
                          f"Time in row operations per index and operation ({_SRC}."
                          "SUM_TIMER_*; 0 while table I/O is not timed).", _LABELS)
TRUNCATED = truncated_spec("dbgauge_mysql_index_io_waits", "indexes")
METRICS = MetricTable(WAITS, WAIT_SECONDS, TRUNCATED)


def index_samples(facts: Summary) -> Iterator[Sample]:
    yield truncated_sample(TRUNCATED, facts)
    for row in facts.rows:
        schema, table, index = row.keys
        for op in OPERATIONS:
            if op == "insert" and index:
                continue  # inserts are counted on the no-index row only
            labels = {"schema": schema, "table": table, "index": index, "operation": op}
            if (count := row.values.get(f"count_{op}")) is not None:
                yield Sample(WAITS.name, count, labels)
            if (timer := row.values.get(f"timer_{op}")) is not None:
                yield Sample(WAIT_SECONDS.name, timer * PICOSECONDS, labels)


class MySQLPerfSchemaIndexIOWaits(SummaryCollector):
    name = "mysql_perf_schema_index_io_waits"
    help = ("Row operations and their time per index from performance_schema "
            "(table_io_waits_summary_by_index_usage), the top N indexes; opt-in.")
    metrics = METRICS
    options = limit_option(1000, "indexes, the most wait time first")
    statement = "perf_schema_index_io_waits"
    keys, columns, labels = KEYS, COLUMNS, ("schema", "table", "index", "operation")
    truncated = TRUNCATED

    def samples(self, facts: Summary) -> Iterable[Sample]:
        return index_samples(facts)
