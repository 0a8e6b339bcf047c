"""mysql_perf_schema_waits: what the server's threads waited on, by wait instrument.

From performance_schema.events_waits_summary_global_by_event_name: per instrument
(`wait/io/file/innodb/innodb_data_file`, `wait/synch/mutex/...`, `wait/lock/table/...`)
the waits counted and their time (SUM_TIMER_WAIT, picoseconds, exported in seconds).
Opt-in, as in mysqld_exporter (`--collect.perf_schema.eventswaits`): a server has several
hundred instruments, so two series each. The label set is bounded by the server's own
instrument list and by `limit` (default 2000, above any server's instrument count; the
costliest first); `..._truncated` says when rows were left out. Needs SELECT on
performance_schema; with performance_schema off the table is empty.
"""

from __future__ import annotations

from dbgauge.collectors._summary import (
    PICOSECONDS,
    SummaryCollector,
    limit_option,
    truncated_spec,
)
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "performance_schema.events_waits_summary_global_by_event_name"
KEYS = ("event_name",)
COLUMNS = ("count_star", "sum_timer_wait")
WAITS = MetricSpec("dbgauge_mysql_wait_events_total", "counter",
                   f"Waits by wait instrument ({_SRC}.COUNT_STAR).", ("event",))
WAIT_SECONDS = MetricSpec("dbgauge_mysql_wait_event_seconds_total", "counter",
                          f"Time waited, by wait instrument ({_SRC}.SUM_TIMER_WAIT; 0 while the "
                          "instrument is not timed).", ("event",))
TRUNCATED = truncated_spec("dbgauge_mysql_wait_events", "wait instruments")
METRICS = MetricTable(WAITS, WAIT_SECONDS, TRUNCATED)
FAMILIES = {"count_star": (WAITS, "", 1.0), "sum_timer_wait": (WAIT_SECONDS, "", PICOSECONDS)}


class MySQLPerfSchemaWaits(SummaryCollector):
    name = "mysql_perf_schema_waits"
    help = ("Waits and wait time per wait instrument from performance_schema "
            "(events_waits_summary_global_by_event_name); opt-in.")
    metrics = METRICS
    options = limit_option(2000, "wait instruments, the most waited on first")
    statement = "perf_schema_waits"
    keys, columns, labels = KEYS, COLUMNS, ("event",)
    families = FAMILIES
    truncated = TRUNCATED
