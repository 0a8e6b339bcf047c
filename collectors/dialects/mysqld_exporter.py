"""mysqld_exporter's names (prometheus/mysqld_exporter; Debian's 0.14 and upstream).

The families of its scrapers, from the facts dbgauge's collectors read in the same scrape:
the default global_status and global_variables (`_mysqld_status`), slave_status
(`_mysqld_slave`), info_schema.query_response_time (below), info_schema.innodb_cmp and
innodb_cmpmem (`_mysqld_more`), the optional ones (`_mysqld_more`; MariaDB's user
statistics: `_mysqld_userstat`; mysql.user: `_mysqld_accounts`; innodb_tablespaces:
`_mysqld_tablespaces`; eventsstatementssum: `_mysqld_statements_sum`; memory_events:
`_mysqld_memory`; sys.user_summary: `_mysqld_sys`), `mysql_up`, and the
exporter's own `mysql_exporter_*` scrape families (below). Where Debian's 0.14 and
upstream differ, upstream's families are exported too (its MariaDB GTID positions, MySQL
8.4's SHOW REPLICA STATUS names). docs/compat.md lists what differs, and why.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors._values import go_float
from dbgauge.collectors.dialects import (
    _mysqld_accounts,
    _mysqld_memory,
    _mysqld_more,
    _mysqld_slave,
    _mysqld_statements_sum,
    _mysqld_status,
    _mysqld_sys,
    _mysqld_tablespaces,
    _mysqld_userstat,
)
from dbgauge.collectors.mariadb_query_response_time import ResponseTimeFacts
from dbgauge.toolkit.dialect import (
    Dialect,
    PeerFamilies,
    PeerFamily,
    PeerSpec,
    ScrapeStats,
)
from dbgauge.toolkit.metrics import Sample

UP = PeerSpec("mysql_up", "gauge", "Whether the MySQL server is up.")

# ------------------------------------------------------------ info_schema.query_response_time

QUERY_RESPONSE_TIME = PeerSpec(
    "mysql_info_schema_query_response_time_seconds", "histogram",
    "The number of all queries by duration they took to execute.")


def query_response_time(facts: ResponseTimeFacts) -> Iterator[Sample]:
    """info_schema.query_response_time: one histogram of every query (the plugin's ranges
    as buckets, TOO LONG counted in +Inf only). Percona Server's _READ/_WRITE tables do
    not exist on MariaDB, so neither do their histograms."""
    if not facts.configured or not facts.buckets:
        return
    name = QUERY_RESPONSE_TIME.name
    count = facts.buckets[-1][1]
    for bound, cumulative in facts.buckets:
        if bound != float("inf"):
            yield FAMILIES.sample(name + "_bucket", cumulative, {"le": go_float(bound)})
    yield FAMILIES.sample(name + "_bucket", count, {"le": "+Inf"})
    yield FAMILIES.sample(name + "_sum", facts.seconds or 0.0)
    yield FAMILIES.sample(name + "_count", count)


# ------------------------------------------------------------ the exporter's own families

# dbgauge collector -> the mysqld_exporter scrapers whose families it gives: what the
# mysql_exporter_* families name (every such collector, default or not)
SCRAPERS: dict[str, tuple[str, ...]] = {
    "mysql_global_status": ("global_status",),
    "mysql_global_variables": ("global_variables",),
    "mysql_replication": ("slave_status",),
    "mariadb_query_response_time": ("info_schema.query_response_time",),
    "mysql_innodb_cmp": ("info_schema.innodb_cmp",),
    "mysql_innodb_cmpmem": ("info_schema.innodb_cmpmem",),
    # the optional scrapers (`--collect.*`), from the collectors of _mysqld_more
    "mysql_innodb": ("info_schema.innodb_metrics",),
    "mysql_tables": ("info_schema.tables", "perf_schema.tableiowaits"),
    "mysql_binlog": ("binlog_size",),
    "mysql_engine_innodb_status": ("engine_innodb_status",),
    "mysql_processlist": ("info_schema.processlist",),
    "mysql_statements": ("perf_schema.eventsstatements",),
    "mysql_perf_schema_waits": ("perf_schema.eventswaits",),
    "mysql_perf_schema_file_events": ("perf_schema.file_events",),
    "mysql_perf_schema_file_instances": ("perf_schema.file_instances",),
    "mysql_perf_schema_index_io_waits": ("perf_schema.indexiowaits",),
    "mysql_perf_schema_table_lock_waits": ("perf_schema.tablelocks",),
    "mysql_auto_increment": ("auto_increment.columns",),
    "mysql_user_statistics": ("info_schema.userstats", "info_schema.clientstats",
                              "info_schema.tablestats", "info_schema.schemastats"),
    "mysql_accounts": ("mysql.user",),
    "mysql_innodb_tablespaces": ("info_schema.innodb_tablespaces",),
    "mysql_statement_totals": ("perf_schema.eventsstatementssum",),
    "mysql_perf_schema_memory": ("perf_schema.memory_events",),
    "mysql_sys_user_summary": ("sys.user_summary",),
}
LAST_SCRAPE_ERROR = PeerSpec(
    "mysql_exporter_last_scrape_error", "gauge",
    "Whether the last scrape of metrics from MySQL resulted in an error (1 for error, 0 for "
    "success).")
SCRAPES = PeerSpec("mysql_exporter_scrapes_total", "counter",
                   "Total number of times MySQL was scraped for metrics.")
SCRAPE_ERRORS = PeerSpec("mysql_exporter_scrape_errors_total", "counter",
                         "Total number of times an error occurred scraping a MySQL.",
                         ("collector",))
DURATION = PeerSpec("mysql_exporter_collector_duration_seconds", "gauge",
                    "Collector time duration.", ("collector",))


def exporter_samples(stats: ScrapeStats) -> Iterator[Sample]:
    """mysql_exporter_*: this runner's scrapes of the target, whether this one failed
    (the target down, or a collector that gives the peer's families failed), the failed
    runs of those collectors by the peer's scraper name, and each one's duration; the
    "connection" duration is the time spent connecting (0 on a kept connection)."""
    failed = not stats.up
    if stats.up:
        yield FAMILIES.sample(DURATION.name, stats.connect_seconds,
                              {"collector": "connection"})
    for collector, success, seconds in stats.collectors:
        for scraper in SCRAPERS.get(collector, ()):
            failed = failed or not success
            yield FAMILIES.sample(DURATION.name, seconds, {"collector": "collect." + scraper})
    yield FAMILIES.sample(SCRAPES.name, float(stats.scrapes))
    yield FAMILIES.sample(LAST_SCRAPE_ERROR.name, 1.0 if failed else 0.0)
    for collector, count in stats.failures.items():
        for scraper in SCRAPERS.get(collector, ()):
            yield FAMILIES.sample(SCRAPE_ERRORS.name, float(count),
                                  {"collector": "collect." + scraper})


FAMILIES = PeerFamilies(
    PeerFamily(UP, "dbgauge_up"),
    *_mysqld_status.DECLARED,
    *_mysqld_slave.DECLARED,
    PeerFamily(QUERY_RESPONSE_TIME, "dbgauge_mysql_query_response_time_total",
               "dbgauge's buckets are an untyped family (le in seconds) with "
               "dbgauge_mysql_query_response_time_seconds_total beside it"),
    PeerFamily(LAST_SCRAPE_ERROR, "dbgauge_collector_success",
               "1 when the target is down or a collector behind these scrapers failed"),
    PeerFamily(SCRAPES, "", "counts this dbgauge's scrapes of the target"),
    PeerFamily(SCRAPE_ERRORS, "dbgauge_collector_success",
               "failed runs of the collectors behind these scrapers"),
    PeerFamily(DURATION, "dbgauge_collector_duration_seconds",
               "the time of the collector behind each scraper; `connection`: connecting "
               "(0 on a kept connection)"),
    *_mysqld_more.FAMILIES,
    *_mysqld_userstat.FAMILIES,
    *_mysqld_accounts.FAMILIES,
    *_mysqld_tablespaces.FAMILIES,
    *_mysqld_statements_sum.FAMILIES,
    *_mysqld_memory.FAMILIES,
    *_mysqld_sys.FAMILIES,
)

DIALECT = Dialect(
    name="mysqld_exporter", kind="mysql",
    help="mysqld_exporter's mysql_* names, labels and values",
    up=UP, families=FAMILIES,
    translate={"mysql_global_status": _mysqld_status.global_status,
               "mysql_global_variables": _mysqld_status.global_variables,
               "mysql_replication": _mysqld_slave.slave_status,
               "mariadb_query_response_time": query_response_time,
               **_mysqld_more.TRANSLATE, **_mysqld_userstat.TRANSLATE,
               **_mysqld_accounts.TRANSLATE, **_mysqld_tablespaces.TRANSLATE,
               **_mysqld_statements_sum.TRANSLATE, **_mysqld_memory.TRANSLATE,
               **_mysqld_sys.TRANSLATE},
    # the collectors behind the peer's default scrapers (added to a target's defaults)
    collectors=("mysql_global_status", "mysql_global_variables", "mysql_replication",
                "mariadb_query_response_time", "mysql_innodb_cmp", "mysql_innodb_cmpmem"),
    self_samples=exporter_samples,
)
