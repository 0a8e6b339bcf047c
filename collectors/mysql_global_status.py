"""mysql_global_status: every numeric SHOW GLOBAL STATUS variable, typed (MySQL and MariaDB).

mysqld_exporter exports the whole of SHOW GLOBAL STATUS untyped, so `rate()` cannot tell a
counter from a gauge and `promtool` complains. Here each variable becomes its own family
`dbgauge_mysql_global_status_<name>` (named at run time: the set differs by flavor,
version and loaded plugins), typed by the table below: counters get `_total`, everything
else -- the known gauges and any name the table does not know -- is a gauge (a wrong
gauge only loses `rate()` hints; a wrong counter would lie about resets).

Values: numbers as the server reports them (raw units: Innodb_row_lock_time is in
milliseconds, as documented by the server); ON/OFF become 1/0; text and NULL give no
sample. The facts keep every text value too (Galera's wsrep_cluster_status,
wsrep_local_state_uuid, wsrep_provider_version, ...): `--compat mysqld_exporter` reads
them as mysqld_exporter does.

Names: lower-cased, anything outside [a-z0-9_] becomes `_`; a gauge whose name ends in a
suffix Prometheus reserves (`_total`, `_count`, `_sum`, `_bucket`) gets `_value` appended,
and a name part `promtool` reads as an abbreviated or non-base unit or a metric type (`s`,
`ms`, `kb`, `days`, `milliseconds`, `gauge`, ...) gets an `x` appended, so the full output
stays lint-clean.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from dbgauge.collectors.mysql_status import split_status_rows
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

PREFIX = "dbgauge_mysql_global_status_"

# ---------------------------------------------------------------- the typing table
# A variable is a counter when its lower-cased name starts with one of COUNTER_PREFIXES
# (and is not in GAUGE_NAMES), ends with one of COUNTER_SUFFIXES, or is in COUNTER_NAMES.
COUNTER_PREFIXES: tuple[str, ...] = (
    "com_",                      # statements executed, by kind
    "handler_",                  # storage-engine row operations
    "bytes_",                    # Bytes_received, Bytes_sent
    "select_",                   # join types (full scans, ranges)
    "sort_",                     # sorts and merge passes
    "table_locks_",              # table locks granted at once / after a wait
    "created_tmp_",              # implicit temporary tables and files
    "aborted_",                  # dropped clients, failed connects
    "connection_errors_",        # refused connections by reason
    "feature_",                  # MariaDB: times a feature was used
    "opened_",                   # tables, files, definitions opened
    "innodb_rows_",              # MySQL: rows read/inserted/updated/deleted
    "innodb_system_rows_",       # MySQL: the same in system tables
    "innodb_ibuf_merged_",       # change buffer merges
    "innodb_ibuf_discarded_",
    "innodb_encryption_n_",      # MariaDB: blocks encrypted/decrypted
    "innodb_encryption_rotation_pages_",
    "innodb_defragment_",
    "innodb_num_pages_",         # MariaDB: page compression/encryption operations
    "innodb_num_page_",
    "ssl_finished_",
    "mysqlx_bytes_",             # MySQL X protocol traffic
    "mysqlx_stmt_",
    "mysqlx_crud_",
)
COUNTER_SUFFIXES: tuple[str, ...] = (
    "_lost",                     # Performance_schema_*_lost: instruments that could not record
)
COUNTER_NAMES: frozenset[str] = frozenset({
    "questions", "queries", "slow_queries", "connections", "threads_created",
    "slow_launch_threads", "access_denied_errors", "empty_queries", "executed_events",
    "executed_triggers", "delayed_errors", "delayed_writes", "delete_scan", "update_scan",
    "locked_connects", "max_execution_time_exceeded", "max_execution_time_set",
    "max_execution_time_set_failed", "max_statement_time_exceeded",
    "binlog_commits", "binlog_group_commits", "binlog_group_commit_trigger_count",
    "binlog_group_commit_trigger_lock_wait", "binlog_group_commit_trigger_timeout",
    "binlog_bytes_written", "binlog_cache_disk_use", "binlog_cache_use",
    "binlog_stmt_cache_disk_use", "binlog_stmt_cache_use", "busy_time", "cpu_time",
    "column_compressions", "column_decompressions", "key_read_requests", "key_reads",
    "key_write_requests", "key_writes", "qcache_hits", "qcache_inserts",
    "qcache_lowmem_prunes", "qcache_not_cached", "rows_read", "rows_sent", "rows_tmp_read",
    "subquery_cache_hit", "subquery_cache_miss", "syncs", "table_open_cache_hits",
    "table_open_cache_misses", "table_open_cache_overflows", "tc_log_page_waits",
    "master_gtid_wait_count", "master_gtid_wait_time", "master_gtid_wait_timeouts",
    "optimizer_join_prefixes_check_calls", "resultset_metadata_skipped",
    "slave_received_heartbeats", "slave_retried_transactions", "slave_skipped_errors",
    "slave_connections", "replica_received_heartbeats", "transactions_gtid_foreign_engine",
    "transactions_multi_engine", "rpl_transactions_multi_engine",
    "rpl_semi_sync_master_get_ack", "rpl_semi_sync_master_net_wait_time",
    "rpl_semi_sync_master_net_waits", "rpl_semi_sync_master_no_times",
    "rpl_semi_sync_master_no_tx", "rpl_semi_sync_master_request_ack",
    "rpl_semi_sync_master_timefunc_failures", "rpl_semi_sync_master_tx_wait_time",
    "rpl_semi_sync_master_tx_waits", "rpl_semi_sync_master_wait_pos_backtraverse",
    "rpl_semi_sync_master_yes_tx", "rpl_semi_sync_slave_send_ack",
    "rpl_semi_sync_source_net_wait_time", "rpl_semi_sync_source_net_waits",
    "rpl_semi_sync_source_no_times", "rpl_semi_sync_source_no_tx",
    "rpl_semi_sync_source_timefunc_failures", "rpl_semi_sync_source_tx_wait_time",
    "rpl_semi_sync_source_tx_waits", "rpl_semi_sync_source_wait_pos_backtraverse",
    "rpl_semi_sync_source_yes_tx",
    "aria_pagecache_read_requests", "aria_pagecache_reads", "aria_pagecache_write_requests",
    "aria_pagecache_writes", "aria_transaction_log_syncs",
    "ssl_accepts", "ssl_accept_renegotiates", "ssl_client_connects",
    "ssl_connect_renegotiates", "ssl_callback_cache_hits", "ssl_session_cache_hits",
    "ssl_session_cache_misses", "ssl_session_cache_overflows", "ssl_session_cache_timeouts",
    "ssl_sessions_reused", "mysqlx_errors_sent", "mysqlx_rows_sent",
    "wsrep_local_bf_aborts", "wsrep_local_cert_failures", "wsrep_local_commits",
    "wsrep_local_replays", "wsrep_received", "wsrep_received_bytes", "wsrep_replicated",
    "wsrep_replicated_bytes",
    # InnoDB
    "innodb_buffer_pool_read_requests", "innodb_buffer_pool_reads",
    "innodb_buffer_pool_write_requests", "innodb_buffer_pool_wait_free",
    "innodb_buffer_pool_pages_flushed", "innodb_buffer_pool_pages_made_young",
    "innodb_buffer_pool_pages_made_not_young", "innodb_buffer_pool_pages_lru_flushed",
    "innodb_buffer_pool_pages_lru_freed", "innodb_buffer_pool_pages_split",
    "innodb_buffer_pool_read_ahead", "innodb_buffer_pool_read_ahead_rnd",
    "innodb_buffer_pool_read_ahead_evicted", "innodb_data_fsyncs", "innodb_data_read",
    "innodb_data_reads", "innodb_data_writes", "innodb_data_written",
    "innodb_dblwr_pages_written", "innodb_dblwr_writes", "innodb_log_waits",
    "innodb_log_write_requests", "innodb_log_writes", "innodb_os_log_written",
    "innodb_os_log_fsyncs", "innodb_pages_created", "innodb_pages_read",
    "innodb_pages_written", "innodb_row_lock_time", "innodb_row_lock_waits",
    "innodb_deadlocks", "innodb_adaptive_hash_hash_searches",
    "innodb_adaptive_hash_non_hash_searches", "innodb_background_log_sync",
    "innodb_ibuf_merges", "innodb_master_thread_active_loops",
    "innodb_master_thread_idle_loops", "innodb_truncated_status_writes",
    "innodb_undo_truncations", "innodb_page_compression_saved",
    "innodb_encryption_num_key_requests", "innodb_instant_alter_column",
    "innodb_bulk_operations", "innodb_sampled_pages_read", "innodb_sampled_pages_skipped",
})
# Documented gauges (anything not a counter is a gauge; these are listed so the table
# says what it knows rather than what it forgot).
GAUGE_NAMES: frozenset[str] = frozenset({
    "uptime", "uptime_since_flush_status", "threads_connected", "threads_running",
    "threads_cached", "max_used_connections", "open_files", "open_tables",
    "open_table_definitions", "open_streams", "prepared_stmt_count",
    "innodb_buffer_pool_pages_data", "innodb_buffer_pool_pages_dirty",
    "innodb_buffer_pool_pages_free", "innodb_buffer_pool_pages_misc",
    "innodb_buffer_pool_pages_old", "innodb_buffer_pool_pages_total",
    "innodb_buffer_pool_bytes_data", "innodb_buffer_pool_bytes_dirty",
    "innodb_row_lock_current_waits", "innodb_row_lock_time_avg", "innodb_row_lock_time_max",
    "innodb_data_pending_fsyncs", "innodb_data_pending_reads", "innodb_data_pending_writes",
    "innodb_page_size", "innodb_checkpoint_age", "innodb_checkpoint_max_age",
    "innodb_history_list_length", "innodb_num_open_files", "innodb_lsn_current",
    "innodb_lsn_flushed", "innodb_lsn_last_checkpoint", "innodb_max_trx_id",
    "key_blocks_not_flushed", "key_blocks_unused", "key_blocks_used", "key_blocks_warm",
    "qcache_free_blocks", "qcache_free_memory", "qcache_queries_in_cache",
    "qcache_total_blocks", "memory_used", "memory_used_initial", "slaves_connected",
    "slaves_running", "slave_open_temp_tables", "replica_open_temp_tables",
    "rpl_semi_sync_master_clients", "rpl_semi_sync_master_wait_sessions",
    "rpl_semi_sync_master_net_avg_wait_time", "rpl_semi_sync_master_tx_avg_wait_time",
    "performance_schema_session_connect_attrs_longest_seen", "last_query_cost",
    "ssl_ctx_verify_depth", "ssl_ctx_verify_mode", "ssl_default_timeout",
    "ssl_session_cache_size", "ssl_used_session_cache_entries", "ssl_verify_depth",
    "ssl_verify_mode", "acl_cache_items_count", "innodb_redo_log_capacity_resized",
})
RESERVED_SUFFIXES = ("_total", "_count", "_sum", "_bucket")
# Name parts promtool (util/promlint) reports: abbreviated units, metric types, non-base
# units, and base units with a scale prefix (milliseconds, kilobytes).
LINTED_PARTS = frozenset({"s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb",
                          "m", "h", "d", "counter", "gauge", "summary", "histogram",
                          "untyped", "minutes", "hours", "days", "weeks", "bits", "calories",
                          "pounds", "ounces", "fahrenheit"})
_SCALED_UNIT = re.compile(r"^(pico|nano|micro|milli|centi|deci|deca|hecto|kilo|kibi|mega|mibi"
                          r"|giga|gibi|tera|tebi|peta|pebi)(seconds|bytes|meters|metres|grams"
                          r"|joules|volts|amperes|celsius|kelvin)$")
_NOT_NAME = re.compile(r"[^a-z0-9_]+")


def is_counter(variable: str) -> bool:
    """True when the status variable only grows (until a restart or FLUSH STATUS)."""
    name = variable.lower()
    if name in GAUGE_NAMES:
        return False
    return (name in COUNTER_NAMES or name.startswith(COUNTER_PREFIXES)
            or name.endswith(COUNTER_SUFFIXES))


def sanitize(variable: str) -> str:
    """A status or variable name as a valid, lint-clean Prometheus name part."""
    name = _NOT_NAME.sub("_", variable.lower()).strip("_")
    name = re.sub(r"_+", "_", name) or "unnamed"
    parts = [p + "x" if p in LINTED_PARTS or _SCALED_UNIT.match(p) else p
             for p in name.split("_")]
    return "_".join(parts)


def gauge_name(prefix: str, variable: str) -> str:
    """prefix + sanitized name, with `_value` after a suffix Prometheus reserves."""
    name = prefix + sanitize(variable)
    return name + "_value" if name.endswith(RESERVED_SUFFIXES) else name


@dataclass(frozen=True)
class GlobalStatusFacts:
    """Every numeric SHOW GLOBAL STATUS variable, by the server's own name; `text`: the
    value as written of every variable that is not a plain number (words such as ON or
    Primary, uuids, versions), NULL left out."""

    values: Mapping[str, float]
    text: Mapping[str, str] = field(default_factory=dict)


@lru_cache(maxsize=4096)
def status_spec(variable: str) -> MetricSpec:
    """The family one status variable becomes, named and typed by the table above (cached:
    the same ~500 names come back on every scrape)."""
    if is_counter(variable):
        return MetricSpec(PREFIX + sanitize(variable) + "_total", "counter",
                          f"SHOW GLOBAL STATUS {variable}: a counter (grows until restart "
                          "or FLUSH STATUS), raw value.")
    return MetricSpec(gauge_name(PREFIX, variable), "gauge",
                      f"SHOW GLOBAL STATUS {variable}: a gauge, raw value (ON/OFF as 1/0).")


# The families alert rules name, declared so the README lists them (their samples then
# carry no run-time spec: a run-time family never shadows a declared one).
METRICS = MetricTable(*map(status_spec, (
    "Uptime", "Threads_connected", "Threads_running", "Slow_queries", "Questions",
    "Innodb_log_waits", "Innodb_row_lock_waits", "Aborted_connects")))


def status_samples(values: Mapping[str, float]) -> Iterator[Sample]:
    """One sample per variable; a second variable that sanitizes to a name already taken
    (names differing only in case or punctuation) is left out."""
    seen: set[str] = set()
    for variable, value in values.items():
        spec = status_spec(variable)
        if spec.name in seen:
            continue
        seen.add(spec.name)
        yield METRICS.sample(spec, value)


class MySQLGlobalStatus(Collector[GlobalStatusFacts]):
    name = "mysql_global_status"
    help = ("Every numeric SHOW GLOBAL STATUS variable as dbgauge_mysql_global_status_<name>, "
            "counters (_total) and gauges told apart by a documented table.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    dynamic_prefixes = (PREFIX,)

    def read(self, conn: Connection) -> GlobalStatusFacts:
        return GlobalStatusFacts(*split_status_rows(conn.query("global_status_all")))

    def samples(self, facts: GlobalStatusFacts) -> Iterable[Sample]:
        return status_samples(facts.values)
