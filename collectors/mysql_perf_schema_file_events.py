"""mysql_perf_schema_file_events: file I/O by file instrument (redo log, data files, binlog,
temporary files...), read, write and other operations apart.

From performance_schema.file_summary_by_event_name: per instrument and mode the operations,
their time (picoseconds, exported in seconds) and, for reads and writes, the bytes. Opt-in,
as in mysqld_exporter (`--collect.perf_schema.file_events`); bounded by the server's file
instruments (about a hundred) and `limit` (default 1000); `..._truncated` says when rows
were left out. Needs SELECT on performance_schema.
"""

from __future__ import annotations

from dbgauge.collectors._summary import (
    PICOSECONDS,
    SummaryCollector,
    limit_option,
    truncated_spec,
)
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "performance_schema.file_summary_by_event_name"
_LABELS = ("event", "mode")
KEYS = ("event_name",)
COLUMNS = ("count_read", "sum_timer_read", "sum_number_of_bytes_read", "count_write",
           "sum_timer_write", "sum_number_of_bytes_write", "count_misc", "sum_timer_misc")
OPS = MetricSpec("dbgauge_mysql_file_io_operations_total", "counter",
                 f"File I/O operations by file instrument and mode: read, write, misc (open, "
                 f"close, sync...) ({_SRC}.COUNT_READ/_WRITE/_MISC).", _LABELS)
SECONDS = MetricSpec("dbgauge_mysql_file_io_seconds_total", "counter",
                     f"Time in file I/O by file instrument and mode ({_SRC}.SUM_TIMER_READ/"
                     "_WRITE/_MISC).", _LABELS)
BYTES = MetricSpec("dbgauge_mysql_file_io_bytes_total", "counter",
                   f"Bytes read and written by file instrument ({_SRC}."
                   "SUM_NUMBER_OF_BYTES_READ/_WRITE).", _LABELS)
TRUNCATED = truncated_spec("dbgauge_mysql_file_io", "file instruments")
METRICS = MetricTable(OPS, SECONDS, BYTES, TRUNCATED)
FAMILIES = {
    "count_read": (OPS, "read", 1.0), "count_write": (OPS, "write", 1.0),
    "count_misc": (OPS, "misc", 1.0),
    "sum_timer_read": (SECONDS, "read", PICOSECONDS),
    "sum_timer_write": (SECONDS, "write", PICOSECONDS),
    "sum_timer_misc": (SECONDS, "misc", PICOSECONDS),
    "sum_number_of_bytes_read": (BYTES, "read", 1.0),
    "sum_number_of_bytes_write": (BYTES, "write", 1.0),
}


class MySQLPerfSchemaFileEvents(SummaryCollector):
    name = "mysql_perf_schema_file_events"
    help = ("File I/O operations, time and bytes per file instrument and mode from "
            "performance_schema (file_summary_by_event_name); opt-in.")
    metrics = METRICS
    options = limit_option(1000, "file instruments, the most time first")
    statement = "perf_schema_file_events"
    keys, columns, labels = KEYS, COLUMNS, _LABELS
    families = FAMILIES
    truncated = TRUNCATED
