"""mysql_perf_schema_memory: memory per instrument from performance_schema (MySQL 8 and
MariaDB 10.5+).

From performance_schema.memory_summary_global_by_event_name, the instruments that allocated
since startup: bytes allocated and freed (counters) and in use now (a gauge; the two
counters' difference). Which buffer, cache or per-connection structure holds the server's
memory, where status variables give one total at most. Opt-in, as mysqld_exporter's
`--collect.perf_schema.memory_events`: `limit` (default 1000 instruments, the most in use
first) bounds it and `..._truncated` says when instruments were left out. Needs SELECT on
performance_schema (and its memory instruments enabled, the default on MySQL 8 and MariaDB
10.5+ with performance_schema=ON).
"""

from __future__ import annotations

from dbgauge.collectors._summary import SummaryCollector, limit_option, truncated_spec
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "performance_schema.memory_summary_global_by_event_name"
ALLOCATED = MetricSpec("dbgauge_mysql_memory_allocated_bytes_total", "counter",
                       f"Bytes allocated per memory instrument ({_SRC}.SUM_NUMBER_OF_BYTES_ALLOC).",
                       ("event_name",))
FREED = MetricSpec("dbgauge_mysql_memory_freed_bytes_total", "counter",
                   f"Bytes freed per memory instrument ({_SRC}.SUM_NUMBER_OF_BYTES_FREE).",
                   ("event_name",))
USED = MetricSpec("dbgauge_mysql_memory_used_bytes", "gauge",
                  f"Bytes in use per memory instrument ({_SRC}.CURRENT_NUMBER_OF_BYTES_USED; "
                  "negative when freed by another instrument's thread than allocated).",
                  ("event_name",))
TRUNCATED = truncated_spec("dbgauge_mysql_memory", "memory instruments")
METRICS = MetricTable(ALLOCATED, FREED, USED, TRUNCATED)


class MySQLPerfSchemaMemory(SummaryCollector):
    name = "mysql_perf_schema_memory"
    help = ("Memory allocated, freed and in use per memory instrument from performance_schema, "
            "the top N by bytes in use; opt-in.")
    metrics = METRICS
    options = limit_option(1000, "memory instruments, the most bytes in use first")
    statement = "perf_schema_memory"
    keys = ("event_name",)
    columns = ("bytes_alloc", "bytes_free", "bytes_used")
    labels = ("event_name",)
    families = {"bytes_alloc": (ALLOCATED, "", 1.0), "bytes_free": (FREED, "", 1.0),
                "bytes_used": (USED, "", 1.0)}
    truncated = TRUNCATED
