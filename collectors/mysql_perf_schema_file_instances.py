"""mysql_perf_schema_file_instances: reads and writes per open file (each table's .ibd,
the redo and undo logs, binlogs...).

From performance_schema.file_summary_by_instance: per file and instrument the read and
write operations and bytes. Opt-in, as in mysqld_exporter
(`--collect.perf_schema.file_instances`): one series per file and mode, so the label set
grows with the tables; `limit` (default 1000, the files with the most bytes first) bounds
it and `..._truncated` says when files were left out. The file label is the path as the
server names it. Needs SELECT on performance_schema.
"""

from __future__ import annotations

from dbgauge.collectors._summary import (
    SummaryCollector,
    limit_option,
    truncated_spec,
)
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "performance_schema.file_summary_by_instance"
_LABELS = ("file", "event", "mode")
KEYS = ("file_name", "event_name")
COLUMNS = ("count_read", "count_write", "sum_number_of_bytes_read",
           "sum_number_of_bytes_write")
OPS = MetricSpec("dbgauge_mysql_file_instance_operations_total", "counter",
                 f"Read and write operations per file, for the top N files by bytes "
                 f"({_SRC}.COUNT_READ/_WRITE).", _LABELS)
BYTES = MetricSpec("dbgauge_mysql_file_instance_bytes_total", "counter",
                   f"Bytes read and written per file, for the top N files by bytes "
                   f"({_SRC}.SUM_NUMBER_OF_BYTES_READ/_WRITE).", _LABELS)
TRUNCATED = truncated_spec("dbgauge_mysql_file_instances", "open files")
METRICS = MetricTable(OPS, BYTES, TRUNCATED)
FAMILIES = {
    "count_read": (OPS, "read", 1.0), "count_write": (OPS, "write", 1.0),
    "sum_number_of_bytes_read": (BYTES, "read", 1.0),
    "sum_number_of_bytes_write": (BYTES, "write", 1.0),
}


class MySQLPerfSchemaFileInstances(SummaryCollector):
    name = "mysql_perf_schema_file_instances"
    help = ("Read and write operations and bytes per file from performance_schema "
            "(file_summary_by_instance), the top N files by bytes; opt-in.")
    metrics = METRICS
    options = limit_option(1000, "files, the most bytes read and written first")
    statement = "perf_schema_file_instances"
    keys, columns, labels = KEYS, COLUMNS, _LABELS
    families = FAMILIES
    truncated = TRUNCATED
