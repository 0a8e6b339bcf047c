"""mysql_perf_schema_table_lock_waits: table locks taken per table and lock type (SQL
table locks such as LOCK TABLES or MyISAM's implicit ones, and storage-engine
"external" locks).

From performance_schema.table_lock_waits_summary_by_table: per (schema, table) and lock
type the locks and their time (picoseconds, exported in seconds). The mysql,
performance_schema and information_schema schemas are left out. Opt-in, as in
mysqld_exporter (`--collect.perf_schema.tablelocks`): ten lock types per table, so `limit`
(default 1000 tables, the most wait time first) bounds it and `..._truncated` says when
tables were left out. Needs SELECT on performance_schema.
"""

from __future__ import annotations

from dbgauge.collectors._summary import (
    PICOSECONDS,
    SummaryCollector,
    limit_option,
    truncated_spec,
)
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "performance_schema.table_lock_waits_summary_by_table"
_LABELS = ("schema", "table", "lock")
LOCKS = ("read_normal", "read_with_shared_locks", "read_high_priority", "read_no_insert",
         "read_external", "write_allow_write", "write_concurrent_insert",
         "write_low_priority", "write_normal", "write_external")
KEYS = ("object_schema", "object_name")
COLUMNS = tuple(f"{kind}_{lock}" for lock in LOCKS for kind in ("count", "timer"))
WAITS = MetricSpec("dbgauge_mysql_table_lock_waits_total", "counter",
                   f"Table locks per table and lock type ({_SRC}.COUNT_READ_*/COUNT_WRITE_*; "
                   "lock=read_external/write_external are the storage engine's).", _LABELS)
WAIT_SECONDS = MetricSpec("dbgauge_mysql_table_lock_wait_seconds_total", "counter",
                          f"Time in table locks per table and lock type ({_SRC}.SUM_TIMER_*).",
                          _LABELS)
TRUNCATED = truncated_spec("dbgauge_mysql_table_lock_waits", "tables")
METRICS = MetricTable(WAITS, WAIT_SECONDS, TRUNCATED)
FAMILIES = {
    **{f"count_{lock}": (WAITS, lock, 1.0) for lock in LOCKS},
    **{f"timer_{lock}": (WAIT_SECONDS, lock, PICOSECONDS) for lock in LOCKS},
}


class MySQLPerfSchemaTableLockWaits(SummaryCollector):
    name = "mysql_perf_schema_table_lock_waits"
    help = ("Table locks and their time per table and lock type from performance_schema "
            "(table_lock_waits_summary_by_table), the top N tables; opt-in.")
    metrics = METRICS
    options = limit_option(1000, "tables, the most lock wait time first")
    statement = "perf_schema_table_lock_waits"
    keys, columns, labels = KEYS, COLUMNS, _LABELS
    families = FAMILIES
    truncated = TRUNCATED
