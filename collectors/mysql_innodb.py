"""mysql_innodb: InnoDB buffer pool, I/O, row locks, redo and purge health, correctly typed.

mysqld_exporter exports SHOW GLOBAL STATUS untyped and its InnoDB-status parser yields
three gauges. Here every status value has a declared type and unit, the enabled
INNODB_METRICS counters are typed by their own TYPE column, and the two numbers that
predict trouble -- history list length (purge lag) and checkpoint age (redo pressure) --
come from the cheapest source that has them:

1. status variables (MariaDB: Innodb_history_list_length, Innodb_checkpoint_age;
   MySQL >= 8.0.30: Innodb_redo_log_current_lsn - Innodb_redo_log_checkpoint_lsn);
2. enabled INNODB_METRICS counters (trx_rseg_history_len; log_lsn_checkpoint_age or
   log_lsn_current - log_lsn_last_checkpoint);
3. otherwise SHOW ENGINE INNODB STATUS, read by the pure `parse_innodb_status`.

`read` returns `InnodbFacts` (the status values, the typed INNODB_METRICS rows and the
monitor text's numbers when it had to be read); `samples` maps them to metrics. Without
PROCESS the status variables are still exported and the collector is reported failed
(`dbgauge_collector_success` 0, the log naming the grant): the INNODB_METRICS families, in
dbgauge's names and mysqld_exporter's, are missing rather than zero.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from dbgauge.collectors.mysql_status import parse_status_rows
from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PROCESS, denied, query
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import Incomplete, QueryError
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

BP_PAGES = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_pages", "gauge",
    "Buffer pool pages by state: data (holding table/index pages, dirty ones included), free, "
    "misc (adaptive hash index, locks, other internal use); the states add up to the pool "
    "size (Innodb_buffer_pool_pages_data/_free/_misc).", ("state",))
BP_BYTES = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_bytes", "gauge",
    "Buffer pool bytes by state: data (Innodb_buffer_pool_bytes_data), free and misc "
    "(pages times Innodb_page_size).", ("state",))
BP_DIRTY_PAGES = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_dirty_pages", "gauge",
    "Data pages modified in memory and not yet flushed; a subset of state=data "
    "(Innodb_buffer_pool_pages_dirty).")
BP_DIRTY_BYTES = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_dirty_bytes", "gauge",
    "Bytes in dirty pages (Innodb_buffer_pool_bytes_dirty).")
BP_READ_REQUESTS = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_read_requests_total", "counter",
    "Logical page reads (Innodb_buffer_pool_read_requests). Miss ratio: "
    "rate(..._disk_reads_total) / rate(..._read_requests_total).")
BP_DISK_READS = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_disk_reads_total", "counter",
    "Logical reads the buffer pool could not satisfy, so InnoDB read the page from disk "
    "(Innodb_buffer_pool_reads).")
BP_WRITE_REQUESTS = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_write_requests_total", "counter",
    "Writes done to buffer pool pages (Innodb_buffer_pool_write_requests).")
BP_WAIT_FREE = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_wait_free_total", "counter",
    "Times a thread waited for a free page because the pool was full of dirty pages "
    "(Innodb_buffer_pool_wait_free).")
BP_FLUSHED = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_pages_flushed_total", "counter",
    "Pages flushed from the buffer pool to disk (Innodb_buffer_pool_pages_flushed).")
BP_READ_AHEAD = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_read_ahead_pages_total", "counter",
    "Pages read by the read-ahead thread (Innodb_buffer_pool_read_ahead).")
BP_READ_AHEAD_EVICTED = MetricSpec(
    "dbgauge_mysql_innodb_buffer_pool_read_ahead_evicted_pages_total", "counter",
    "Read-ahead pages evicted without ever being used (Innodb_buffer_pool_read_ahead_evicted).")
ROW_OPS = MetricSpec(
    "dbgauge_mysql_innodb_row_operations_total", "counter",
    "Rows read, inserted, updated and deleted in InnoDB tables (Innodb_rows_*; MySQL only: "
    "MariaDB 10.6+ no longer counts them).", ("operation",))
ROW_LOCK_WAITS = MetricSpec(
    "dbgauge_mysql_innodb_row_lock_waits_total", "counter",
    "Times a transaction had to wait for a row lock (Innodb_row_lock_waits).")
ROW_LOCK_TIME = MetricSpec(
    "dbgauge_mysql_innodb_row_lock_time_seconds_total", "counter",
    "Time spent waiting for row locks (Innodb_row_lock_time, milliseconds on the server).")
ROW_LOCK_CURRENT = MetricSpec(
    "dbgauge_mysql_innodb_row_lock_current_waits", "gauge",
    "Row lock waits in progress right now (Innodb_row_lock_current_waits).")
DATA_READS = MetricSpec("dbgauge_mysql_innodb_data_reads_total", "counter",
                        "Data file read operations (Innodb_data_reads).")
DATA_WRITES = MetricSpec("dbgauge_mysql_innodb_data_writes_total", "counter",
                         "Data file write operations (Innodb_data_writes).")
DATA_FSYNCS = MetricSpec("dbgauge_mysql_innodb_data_fsyncs_total", "counter",
                         "fsync() calls on data files (Innodb_data_fsyncs).")
DATA_READ_BYTES = MetricSpec("dbgauge_mysql_innodb_data_read_bytes_total", "counter",
                             "Bytes read from data files (Innodb_data_read).")
DATA_WRITTEN_BYTES = MetricSpec("dbgauge_mysql_innodb_data_written_bytes_total", "counter",
                                "Bytes written to data files (Innodb_data_written).")
DATA_PENDING = MetricSpec(
    "dbgauge_mysql_innodb_data_pending_operations", "gauge",
    "Data file reads, writes and fsyncs in progress (Innodb_data_pending_*).", ("operation",))
LOG_WAITS = MetricSpec(
    "dbgauge_mysql_innodb_log_waits_total", "counter",
    "Times the redo log buffer was too small and a write had to wait for a flush "
    "(Innodb_log_waits).")
LOG_WRITES = MetricSpec("dbgauge_mysql_innodb_log_writes_total", "counter",
                        "Physical writes to the redo log (Innodb_log_writes).")
LOG_WRITE_REQUESTS = MetricSpec("dbgauge_mysql_innodb_log_write_requests_total", "counter",
                                "Requests to write to the redo log (Innodb_log_write_requests).")
LOG_WRITTEN_BYTES = MetricSpec("dbgauge_mysql_innodb_log_written_bytes_total", "counter",
                               "Bytes written to the redo log (Innodb_os_log_written).")
LOG_FSYNCS = MetricSpec("dbgauge_mysql_innodb_log_fsyncs_total", "counter",
                        "fsync() calls on the redo log (Innodb_os_log_fsyncs; MySQL only).")
DEADLOCKS = MetricSpec(
    "dbgauge_mysql_innodb_deadlocks_total", "counter",
    "Deadlocks InnoDB detected and resolved by rolling a transaction back (Innodb_deadlocks; "
    "on MySQL the lock_deadlocks INNODB_METRICS counter, enabled by default).")
PAGES_CREATED = MetricSpec("dbgauge_mysql_innodb_pages_created_total", "counter",
                           "Pages created in InnoDB tables (Innodb_pages_created).")
PAGES_READ = MetricSpec("dbgauge_mysql_innodb_pages_read_total", "counter",
                        "Pages read from disk into the buffer pool (Innodb_pages_read).")
PAGES_WRITTEN = MetricSpec("dbgauge_mysql_innodb_pages_written_total", "counter",
                           "Pages written from the buffer pool to disk (Innodb_pages_written).")
PAGE_SIZE = MetricSpec("dbgauge_mysql_innodb_page_size_bytes", "gauge",
                       "InnoDB page size (Innodb_page_size).")
HISTORY = MetricSpec(
    "dbgauge_mysql_innodb_history_list_length", "gauge",
    "Undo log records not yet purged; growth means purge is falling behind, usually because "
    "of a long-running transaction (status variable, else INNODB_METRICS "
    "trx_rseg_history_len, else SHOW ENGINE INNODB STATUS).")
CHECKPOINT_AGE = MetricSpec(
    "dbgauge_mysql_innodb_checkpoint_age_bytes", "gauge",
    "Redo written since the last checkpoint (current LSN minus last checkpoint LSN); near "
    "the redo capacity InnoDB must flush synchronously and writes stall (status variables, "
    "else INNODB_METRICS log counters, else SHOW ENGINE INNODB STATUS).")
CHECKPOINT_MAX_AGE = MetricSpec(
    "dbgauge_mysql_innodb_checkpoint_max_age_bytes", "gauge",
    "Checkpoint age at which InnoDB forces synchronous flushing (Innodb_checkpoint_max_age; "
    "MariaDB and Percona Server only).")
REDO_CAPACITY = MetricSpec(
    "dbgauge_mysql_innodb_redo_log_capacity_bytes", "gauge",
    "Redo log capacity in effect (Innodb_redo_log_capacity_resized; MySQL 8.0.30+).")
METRICS_COUNTER = MetricSpec(
    "dbgauge_mysql_innodb_metrics_total", "counter",
    "Enabled information_schema.INNODB_METRICS counters whose TYPE is counter, "
    "status_counter, set_owner or set_member, except those whose COMMENT says they hold a "
    "current level, average or percentage (those are in ..._innodb_metrics_value).",
    ("metric", "subsystem"))
METRICS_GAUGE = MetricSpec(
    "dbgauge_mysql_innodb_metrics_value", "gauge",
    "Enabled information_schema.INNODB_METRICS values whose TYPE is value, or whose COMMENT "
    "says they hold a current level, average or percentage.", ("metric", "subsystem"))
METRICS = MetricTable(
    BP_PAGES, BP_BYTES, BP_DIRTY_PAGES, BP_DIRTY_BYTES, BP_READ_REQUESTS, BP_DISK_READS,
    BP_WRITE_REQUESTS, BP_WAIT_FREE, BP_FLUSHED, BP_READ_AHEAD, BP_READ_AHEAD_EVICTED, ROW_OPS,
    ROW_LOCK_WAITS, ROW_LOCK_TIME, ROW_LOCK_CURRENT, DATA_READS, DATA_WRITES, DATA_FSYNCS,
    DATA_READ_BYTES, DATA_WRITTEN_BYTES, DATA_PENDING, LOG_WAITS, LOG_WRITES, LOG_WRITE_REQUESTS,
    LOG_WRITTEN_BYTES, LOG_FSYNCS, DEADLOCKS, PAGES_CREATED, PAGES_READ, PAGES_WRITTEN,
    PAGE_SIZE, HISTORY, CHECKPOINT_AGE, CHECKPOINT_MAX_AGE, REDO_CAPACITY, METRICS_COUNTER,
    METRICS_GAUGE)

# Status variable -> (metric, labels, scale). Absent variables are skipped: the set differs
# between MySQL and MariaDB (MariaDB 10.6+ dropped Innodb_rows_*, MySQL has no
# Innodb_deadlocks), and the help says which flavor has which.
_DIRECT: dict[str, tuple[MetricSpec, Mapping[str, str], float]] = {
    "Innodb_buffer_pool_pages_data": (BP_PAGES, {"state": "data"}, 1.0),
    "Innodb_buffer_pool_pages_free": (BP_PAGES, {"state": "free"}, 1.0),
    "Innodb_buffer_pool_pages_misc": (BP_PAGES, {"state": "misc"}, 1.0),
    "Innodb_buffer_pool_bytes_data": (BP_BYTES, {"state": "data"}, 1.0),
    "Innodb_buffer_pool_pages_dirty": (BP_DIRTY_PAGES, {}, 1.0),
    "Innodb_buffer_pool_bytes_dirty": (BP_DIRTY_BYTES, {}, 1.0),
    "Innodb_buffer_pool_read_requests": (BP_READ_REQUESTS, {}, 1.0),
    "Innodb_buffer_pool_reads": (BP_DISK_READS, {}, 1.0),
    "Innodb_buffer_pool_write_requests": (BP_WRITE_REQUESTS, {}, 1.0),
    "Innodb_buffer_pool_wait_free": (BP_WAIT_FREE, {}, 1.0),
    "Innodb_buffer_pool_pages_flushed": (BP_FLUSHED, {}, 1.0),
    "Innodb_buffer_pool_read_ahead": (BP_READ_AHEAD, {}, 1.0),
    "Innodb_buffer_pool_read_ahead_evicted": (BP_READ_AHEAD_EVICTED, {}, 1.0),
    "Innodb_rows_read": (ROW_OPS, {"operation": "read"}, 1.0),
    "Innodb_rows_inserted": (ROW_OPS, {"operation": "inserted"}, 1.0),
    "Innodb_rows_updated": (ROW_OPS, {"operation": "updated"}, 1.0),
    "Innodb_rows_deleted": (ROW_OPS, {"operation": "deleted"}, 1.0),
    "Innodb_row_lock_waits": (ROW_LOCK_WAITS, {}, 1.0),
    "Innodb_row_lock_time": (ROW_LOCK_TIME, {}, 0.001),
    "Innodb_row_lock_current_waits": (ROW_LOCK_CURRENT, {}, 1.0),
    "Innodb_data_reads": (DATA_READS, {}, 1.0),
    "Innodb_data_writes": (DATA_WRITES, {}, 1.0),
    "Innodb_data_fsyncs": (DATA_FSYNCS, {}, 1.0),
    "Innodb_data_read": (DATA_READ_BYTES, {}, 1.0),
    "Innodb_data_written": (DATA_WRITTEN_BYTES, {}, 1.0),
    "Innodb_data_pending_reads": (DATA_PENDING, {"operation": "read"}, 1.0),
    "Innodb_data_pending_writes": (DATA_PENDING, {"operation": "write"}, 1.0),
    "Innodb_data_pending_fsyncs": (DATA_PENDING, {"operation": "fsync"}, 1.0),
    "Innodb_log_waits": (LOG_WAITS, {}, 1.0),
    "Innodb_log_writes": (LOG_WRITES, {}, 1.0),
    "Innodb_log_write_requests": (LOG_WRITE_REQUESTS, {}, 1.0),
    "Innodb_os_log_written": (LOG_WRITTEN_BYTES, {}, 1.0),
    "Innodb_os_log_fsyncs": (LOG_FSYNCS, {}, 1.0),
    "Innodb_deadlocks": (DEADLOCKS, {}, 1.0),
    "Innodb_pages_created": (PAGES_CREATED, {}, 1.0),
    "Innodb_pages_read": (PAGES_READ, {}, 1.0),
    "Innodb_pages_written": (PAGES_WRITTEN, {}, 1.0),
    "Innodb_page_size": (PAGE_SIZE, {}, 1.0),
    "Innodb_checkpoint_max_age": (CHECKPOINT_MAX_AGE, {}, 1.0),
    "Innodb_redo_log_capacity_resized": (REDO_CAPACITY, {}, 1.0),
}

# INNODB_METRICS rows typed counter/status_counter whose values go down: current levels,
# averages, percentages, per-call figures (from their COMMENT, MySQL 8 and MariaDB 10.11).
_LEVEL_COMMENT = re.compile(
    r"\b(current|currently|avg|average|percent|recent|recently|per|pending|in progress|"
    r"waiting to be|being created|requested for flushing|target by)\b", re.IGNORECASE)
_LEVEL_NAMES = frozenset({"os_pending_reads", "os_pending_writes", "lock_rec_locks",
                          "lock_table_locks", "trx_active_transactions",
                          "ddl_pending_alter_table", "ddl_online_create_index",
                          "ddl_background_drop_indexes", "buffer_flush_n_to_flush_requested",
                          "buffer_flush_n_to_flush_by_age", "ibuf_size"})
_COUNTER_TYPES = frozenset({"counter", "status_counter", "set_owner", "set_member"})


@dataclass(frozen=True)
class InnodbMetric:
    """One enabled INNODB_METRICS row, with the Prometheus type dbgauge gives it and the
    row's own TYPE (what mysqld_exporter types it by)."""

    name: str
    subsystem: str
    value: float
    counter: bool
    type: str = ""


def classify_innodb_metrics(rows: Iterable[Row]) -> list[InnodbMetric]:
    """INNODB_METRICS rows (name, subsystem, type, count, comment) -> typed values.

    TYPE decides (value -> gauge; counter, status_counter, set_owner, set_member ->
    counter), except rows whose name or COMMENT marks a current level, average or
    percentage, and negative values (MySQL bug 75966): those are gauges.
    """
    out: list[InnodbMetric] = []
    for row in rows:
        value = number(row.get("count"))
        name = text(row.get("name"))
        if value is None or not name:
            continue
        counter = (text(row.get("type")).lower() in _COUNTER_TYPES and value >= 0
                   and name not in _LEVEL_NAMES
                   and not _LEVEL_COMMENT.search(text(row.get("comment"))))
        out.append(InnodbMetric(name, text(row.get("subsystem")), value, counter,
                                text(row.get("type")).lower()))
    return out


@dataclass(frozen=True)
class InnodbStatus:
    """The numbers dbgauge reads from SHOW ENGINE INNODB STATUS (None when not printed)."""

    log_sequence_number: int | None = None
    last_checkpoint: int | None = None
    reported_checkpoint_age: int | None = None  # Percona Server prints it
    max_checkpoint_age: int | None = None  # Percona Server prints it
    history_list_length: int | None = None

    @property
    def checkpoint_age(self) -> int | None:
        """LSN minus last checkpoint LSN, as InnoDB itself computes it."""
        if self.log_sequence_number is not None and self.last_checkpoint is not None:
            return self.log_sequence_number - self.last_checkpoint
        return self.reported_checkpoint_age


_STATUS_LINES = {
    "log_sequence_number": re.compile(r"^Log sequence number\s+(\d+)\s*$", re.M),
    "last_checkpoint": re.compile(r"^Last checkpoint at\s+(\d+)\s*$", re.M),
    "reported_checkpoint_age": re.compile(r"^Checkpoint age\s+(\d+)\s*$", re.M),
    "max_checkpoint_age": re.compile(r"^Max checkpoint age\s+(\d+)\s*$", re.M),
    "history_list_length": re.compile(r"^History list length\s+(\d+)\s*$", re.M),
}


def parse_innodb_status(status: str) -> InnodbStatus:
    """Pure parser of the Status text of SHOW ENGINE INNODB STATUS.

    Handles MySQL 8.0/8.4 (aligned columns, extra 'Log buffer ...' lines), Percona
    Server (explicit checkpoint ages) and MariaDB 10.6+ (single-space LOG section).
    """
    status = status.replace("\r\n", "\n")
    fields: dict[str, int] = {}
    for field, pattern in _STATUS_LINES.items():
        m = pattern.search(status)
        if m:
            fields[field] = int(m.group(1))
    return InnodbStatus(**fields)


def _difference(values: Mapping[str, float], current: str, checkpoint: str) -> float | None:
    if current in values and checkpoint in values:
        return values[current] - values[checkpoint]
    return None


def checkpoint_age_from_status(status: Mapping[str, float]) -> float | None:
    """MariaDB/Percona report the age; MySQL 8.0.30+ reports both LSNs."""
    if "Innodb_checkpoint_age" in status:
        return status["Innodb_checkpoint_age"]
    return _difference(status, "Innodb_redo_log_current_lsn", "Innodb_redo_log_checkpoint_lsn")


def checkpoint_age_from_metrics(metrics: Mapping[str, float]) -> float | None:
    """From enabled INNODB_METRICS log counters (module_log is off by default)."""
    if "log_lsn_checkpoint_age" in metrics:
        return metrics["log_lsn_checkpoint_age"]
    return _difference(metrics, "log_lsn_current", "log_lsn_last_checkpoint")


def status_samples(status: Mapping[str, float]) -> list[Sample]:
    """The directly mapped SHOW GLOBAL STATUS values, plus bytes derived from pages."""
    out = [Sample(spec.name, status[var] * scale, labels)
           for var, (spec, labels, scale) in _DIRECT.items() if var in status]
    page = status.get("Innodb_page_size")
    if page:
        for state in ("free", "misc"):
            pages = status.get(f"Innodb_buffer_pool_pages_{state}")
            if pages is not None:
                out.append(Sample(BP_BYTES.name, pages * page, {"state": state}))
    return out


@dataclass(frozen=True)
class InnodbFacts:
    """What the collector read: InnoDB status variables by name (the set differs by
    flavor and version), the enabled INNODB_METRICS rows, and the SHOW ENGINE INNODB
    STATUS numbers -- read only when the first two lack history list length or
    checkpoint age, else None."""

    status: Mapping[str, float]
    metrics: tuple[InnodbMetric, ...] = ()
    monitor: InnodbStatus | None = None
    metrics_error: str = ""  # INNODB_METRICS refused (no PROCESS): its families are missing

    @property
    def metric_values(self) -> dict[str, float]:
        """Enabled INNODB_METRICS values by name."""
        return {m.name: m.value for m in self.metrics}

    @property
    def history_list_length(self) -> float | None:
        """From the status variable, else INNODB_METRICS, else the monitor text."""
        history = self.status.get("Innodb_history_list_length",
                                  self.metric_values.get("trx_rseg_history_len"))
        if history is None and self.monitor is not None \
                and self.monitor.history_list_length is not None:
            history = float(self.monitor.history_list_length)
        return history

    @property
    def checkpoint_age(self) -> float | None:
        """From status variables, else INNODB_METRICS log counters, else the monitor text."""
        age = checkpoint_age_from_status(self.status)
        if age is None:
            age = checkpoint_age_from_metrics(self.metric_values)
        if age is None and self.monitor is not None and self.monitor.checkpoint_age is not None:
            age = float(self.monitor.checkpoint_age)
        return age


def read_innodb(conn: Connection, denied_ok: bool = False) -> InnodbFacts:
    """Status variables and INNODB_METRICS; the monitor text only when they lack history
    list length or checkpoint age. With `denied_ok` (the collector) an account without
    PROCESS still gets the status variables: the refusal is kept in `metrics_error`."""
    status = parse_status_rows(conn.query("innodb_global_status"))
    try:
        metrics = tuple(classify_innodb_metrics(query(conn, "innodb_metrics", PROCESS)))
        error = ""
    except QueryError as exc:
        if not (denied_ok and denied(exc)):
            raise
        metrics, error = (), str(exc)
    facts = InnodbFacts(status, metrics, metrics_error=error)
    if not error and (facts.history_list_length is None or facts.checkpoint_age is None):
        rows = query(conn, "engine_innodb_status", PROCESS)
        facts = replace(facts, monitor=parse_innodb_status(
            text(rows[0].get("Status")) if rows else ""))
    return facts


class MySQLInnodb(Collector[InnodbFacts]):
    name = "mysql_innodb"
    help = ("InnoDB buffer pool, row operations and locks, data and redo I/O, deadlocks, "
            "history list length and checkpoint age from SHOW GLOBAL STATUS, the enabled "
            "INNODB_METRICS counters and, as a fallback, SHOW ENGINE INNODB STATUS.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> InnodbFacts:
        return read_innodb(conn, denied_ok=True)

    def samples(self, facts: InnodbFacts) -> Iterable[Sample]:
        status = facts.status
        yield from status_samples(status)
        by_name = facts.metric_values
        if "Innodb_deadlocks" not in status and "lock_deadlocks" in by_name:
            yield Sample(DEADLOCKS.name, by_name["lock_deadlocks"])
        for m in facts.metrics:
            spec = METRICS_COUNTER if m.counter else METRICS_GAUGE
            yield Sample(spec.name, m.value, {"metric": m.name, "subsystem": m.subsystem})
        monitor = facts.monitor
        if monitor is not None and "Innodb_checkpoint_max_age" not in status \
                and monitor.max_checkpoint_age:
            yield Sample(CHECKPOINT_MAX_AGE.name, float(monitor.max_checkpoint_age))
        history, age = facts.history_list_length, facts.checkpoint_age
        if history is not None:
            yield Sample(HISTORY.name, history)
        if age is not None:
            yield Sample(CHECKPOINT_AGE.name, age)
        if (why := self.incomplete(facts)) is not None:  # the status samples stand
            raise Incomplete(why)

    def incomplete(self, facts: InnodbFacts) -> str | None:
        return facts.metrics_error or None
