"""mysql_global_variables: every numeric server setting (MySQL and MariaDB).

Utilisation needs its limit: connections over max_connections, buffer pool pages over
innodb_buffer_pool_size, open tables over table_open_cache, redo written over the log size.
Every numeric SHOW GLOBAL VARIABLES value (about 480 of MariaDB 10.11's 680 variables) is
the gauge `dbgauge_mysql_global_variables_<name>` in the server's own unit (bytes for
sizes, seconds for timeouts and long_query_time); ON/OFF as 1/0; a text value gives no
sample (the facts keep it: version, version_comment, transaction_isolation, ... for
`--compat mysqld_exporter`). Names are sanitised as mysql_global_status's are.

The `exclude` option leaves variables out: names or shell-style patterns, matched
case-insensitively (`exclude: [wsrep_*, "performance_schema_*"]`). Settings change
rarely: the collection is reused for `refresh` (60) seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache

from dbgauge.collectors.mysql_global_status import gauge_name
from dbgauge.collectors.mysql_status import split_status_rows
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.metrics import (
    Collector,
    MetricSpec,
    MetricTable,
    Option,
    OptionValue,
    Sample,
)

PREFIX = "dbgauge_mysql_global_variables_"

# What the variables dashboards divide by limit (in their HELP). Names from both flavors;
# a server reports only the ones it has. Every other variable gets a generic HELP.
DESCRIBED: Mapping[str, str] = {
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


class PatternsOption(Option):
    """A list of names or shell-style patterns: a YAML list, or one string of them
    separated by commas; kept as that comma-separated string (an option's value is a
    number or a string)."""

    def check(self, value: object) -> OptionValue:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise ValueError("must be a list of names or patterns (e.g. [wsrep_*])")
        patterns = [i.strip().lower() for i in items if i.strip()]
        if any("," in p for p in patterns):
            raise ValueError("a name or pattern cannot hold a comma")
        return ",".join(patterns)


OPTIONS: Mapping[str, Option] = {
    "exclude": PatternsOption("", "Variables left out: names or shell-style patterns "
                                  "(`*`, `?`, `[...]`), case-insensitive, as a list"),
}


@lru_cache(maxsize=4096)
def variable_spec(name: str) -> MetricSpec:
    """The gauge one variable becomes (cached: the same ~500 names on every collection)."""
    what = DESCRIBED.get(name.lower())
    help_ = (f"SHOW GLOBAL VARIABLES {name}: {what}." if what else
             f"SHOW GLOBAL VARIABLES {name}, raw value (ON/OFF as 1/0).")
    return MetricSpec(gauge_name(PREFIX, name), "gauge", help_)


# The families dashboards divide by, declared so the README lists them.
METRICS = MetricTable(*map(variable_spec, (
    "max_connections", "innodb_buffer_pool_size", "innodb_log_file_size",
    "table_open_cache", "long_query_time")))


@dataclass(frozen=True)
class GlobalVariablesFacts:
    """Every numeric variable this server has (less the excluded ones), by lower-cased
    name; `text`: the value as written of every variable that is not a plain number
    (version, version_comment, transaction_isolation, ...), NULL left out."""

    values: Mapping[str, float]
    text: Mapping[str, str] = field(default_factory=dict)


def excluded(patterns: str) -> frozenset[str] | None:
    """The comma-separated patterns of the `exclude` option, or None for none."""
    found = frozenset(p for p in patterns.split(",") if p)
    return found or None


def variable_facts(values: Mapping[str, float], texts: Mapping[str, str],
                   exclude: frozenset[str] | None = None) -> GlobalVariablesFacts:
    """Numeric values by lower-cased name, less those matching `exclude`; texts kept."""
    kept = {name.lower(): value for name, value in values.items()}
    if exclude:
        kept = {name: value for name, value in kept.items()
                if not any(fnmatchcase(name, pattern) for pattern in exclude)}
    return GlobalVariablesFacts(kept, {name.lower(): t for name, t in texts.items()})


def variable_samples(values: Mapping[str, float]) -> Iterator[Sample]:
    """One gauge per variable; a second variable that sanitises to a name already taken
    is left out."""
    seen: set[str] = set()
    for name, value in values.items():
        spec = variable_spec(name)
        if spec.name in seen:
            continue
        seen.add(spec.name)
        yield METRICS.sample(spec, value)


class MySQLGlobalVariables(Collector[GlobalVariablesFacts]):
    name = "mysql_global_variables"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Every numeric SHOW GLOBAL VARIABLES value as a dbgauge_mysql_global_variables_"
            "<name> gauge (max_connections, innodb_buffer_pool_size, table_open_cache, "
            "long_query_time, ...); the `exclude` option leaves names or patterns out.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    dynamic_prefixes = (PREFIX,)
    options = OPTIONS

    def read(self, conn: Connection) -> GlobalVariablesFacts:
        values, texts = split_status_rows(conn.query("global_variables"))
        return variable_facts(values, texts, excluded(str(self.setting("exclude"))))

    def samples(self, facts: GlobalVariablesFacts) -> Iterable[Sample]:
        return variable_samples(facts.values)
