"""mysql_global_variables: the server settings dashboards divide by (MySQL and MariaDB).

Utilisation needs its limit: connections over max_connections, buffer pool pages over
innodb_buffer_pool_size, open tables over table_open_cache, redo written over the log size.
mysqld_exporter exports all of SHOW GLOBAL VARIABLES; dbgauge exports the allow-list below
(what mysqld_exporter's dashboards and the usual alert rules read), each numeric value as
the gauge `dbgauge_mysql_global_variables_<name>` in the server's own unit (bytes for sizes,
seconds for timeouts and long_query_time); ON/OFF as 1/0; a variable this server does not
have, or whose value is text, gives no sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.collectors.mysql_global_status import gauge_name
from dbgauge.collectors.mysql_status import parse_status_rows
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

PREFIX = "dbgauge_mysql_global_variables_"

# The allow-list: name -> what it limits (in HELP). Names from both flavors; a server
# reports only the ones it has.
ALLOWED: Mapping[str, str] = {
    "max_connections": "client connection limit",
    "max_user_connections": "per-account connection limit (0 = none)",
    "max_connect_errors": "failed connects before a host is blocked",
    "thread_cache_size": "threads kept for reuse",
    "back_log": "listen backlog",
    "open_files_limit": "file descriptors mysqld may use",
    "table_open_cache": "open tables cached (over all instances)",
    "table_open_cache_instances": "partitions of the open-table cache",
    "table_definition_cache": "table definitions cached",
    "max_prepared_stmt_count": "prepared statements allowed server-wide",
    "max_allowed_packet": "largest packet or row (bytes)",
    "max_heap_table_size": "largest MEMORY table (bytes)",
    "tmp_table_size": "largest in-memory temporary table (bytes)",
    "sort_buffer_size": "per-sort buffer (bytes)",
    "join_buffer_size": "per-join buffer (bytes)",
    "read_buffer_size": "sequential scan buffer (bytes)",
    "read_rnd_buffer_size": "random read buffer (bytes)",
    "key_buffer_size": "MyISAM key cache (bytes)",
    "query_cache_size": "query cache (bytes; MariaDB)",
    "query_cache_type": "query cache on (1) or off (0) (MariaDB)",
    "long_query_time": "slow-query threshold (seconds)",
    "slow_query_log": "slow query log on (1) or off (0)",
    "wait_timeout": "idle non-interactive connection timeout (seconds)",
    "interactive_timeout": "idle interactive connection timeout (seconds)",
    "lock_wait_timeout": "metadata lock wait limit (seconds)",
    "max_execution_time": "SELECT time limit (milliseconds, 0 = none; MySQL)",
    "max_statement_time": "statement time limit (seconds, 0 = none; MariaDB)",
    "innodb_buffer_pool_size": "InnoDB buffer pool (bytes)",
    "innodb_buffer_pool_instances": "buffer pool instances",
    "innodb_buffer_pool_chunk_size": "buffer pool resize unit (bytes)",
    "innodb_log_file_size": "one redo log file (bytes)",
    "innodb_log_files_in_group": "redo log files (MySQL before 8.0.30)",
    "innodb_redo_log_capacity": "redo log capacity (bytes; MySQL 8.0.30+)",
    "innodb_log_buffer_size": "redo log buffer (bytes)",
    "innodb_flush_log_at_trx_commit": "redo flush policy (0, 1, 2)",
    "innodb_io_capacity": "background I/O budget (IOPS)",
    "innodb_io_capacity_max": "background I/O ceiling (IOPS)",
    "innodb_max_dirty_pages_pct": "dirty page target (percent)",
    "innodb_open_files": "InnoDB open tablespace files",
    "innodb_page_size": "InnoDB page (bytes)",
    "innodb_thread_concurrency": "threads inside InnoDB (0 = unlimited)",
    "innodb_lock_wait_timeout": "row lock wait limit (seconds)",
    "innodb_read_io_threads": "InnoDB read I/O threads",
    "innodb_write_io_threads": "InnoDB write I/O threads",
    "innodb_purge_threads": "InnoDB purge threads",
    "innodb_file_per_table": "a tablespace per table (1) or the system tablespace (0)",
    "innodb_doublewrite": "doublewrite buffer on (1) or off (0)",
    "innodb_adaptive_hash_index": "adaptive hash index on (1) or off (0)",
    "sync_binlog": "binlog fsync every N commits",
    "binlog_cache_size": "per-transaction binlog cache (bytes)",
    "max_binlog_size": "binlog file rotation size (bytes)",
    "binlog_expire_logs_seconds": "binlog retention (seconds)",
    "log_bin": "binary log on (1) or off (0)",
    "read_only": "read_only (1) or writable (0)",
    "super_read_only": "super_read_only (1) or not (0) (MySQL)",
    "performance_schema": "performance_schema on (1) or off (0)",
    "server_id": "replication server id",
    "replica_parallel_workers": "parallel applier threads (MySQL)",
    "slave_parallel_threads": "parallel applier threads (MariaDB)",
}


def variable_spec(name: str) -> MetricSpec:
    return MetricSpec(gauge_name(PREFIX, name), "gauge",
                      f"SHOW GLOBAL VARIABLES {name}: {ALLOWED[name]}.")


# The families dashboards divide by, declared so the README lists them.
METRICS = MetricTable(*map(variable_spec, (
    "max_connections", "innodb_buffer_pool_size", "innodb_log_file_size",
    "table_open_cache", "long_query_time")))


@dataclass(frozen=True)
class GlobalVariablesFacts:
    """The allow-listed variables this server has, as numbers."""

    values: Mapping[str, float]


def allowed_values(values: Mapping[str, float]) -> dict[str, float]:
    """The allow-listed subset of numeric variables (names compared lower-cased)."""
    return {name.lower(): value for name, value in values.items() if name.lower() in ALLOWED}


def variable_samples(values: Mapping[str, float]) -> Iterator[Sample]:
    for name, value in values.items():
        yield METRICS.sample(variable_spec(name), value)


class MySQLGlobalVariables(Collector[GlobalVariablesFacts]):
    name = "mysql_global_variables"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Server limits dashboards divide by (max_connections, innodb_buffer_pool_size, "
            "innodb_log_file_size, table_open_cache, long_query_time, ...) from SHOW GLOBAL "
            "VARIABLES, as dbgauge_mysql_global_variables_<name> gauges (a documented "
            "allow-list).")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    dynamic_prefixes = (PREFIX,)

    def read(self, conn: Connection) -> GlobalVariablesFacts:
        return GlobalVariablesFacts(
            allowed_values(parse_status_rows(conn.query("global_variables",
                                                      (tuple(ALLOWED),)))))

    def samples(self, facts: GlobalVariablesFacts) -> Iterable[Sample]:
        return variable_samples(facts.values)
