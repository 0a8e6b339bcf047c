"""mysql_statement_totals: every statement's work summed over all digests (MySQL and MariaDB).

From performance_schema.events_statements_summary_by_digest, summed: calls, time, lock
time, errors, warnings, rows affected/sent/examined, temporary tables, joins without an
index or by range, sorts. mysql_statements gives the top N digests; these sums cover every
digest, so a rate of them is the server's whole statement load (while the digest table has
room: past performance_schema_digests_size new digests are counted in one NULL row, still
summed here). One series per column, opt-in as mysqld_exporter's
`--collect.perf_schema.eventsstatementssum`. Needs SELECT on performance_schema.
"""

from __future__ import annotations

from dbgauge.collectors._summary import PICOSECONDS, SummaryCollector
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "performance_schema.events_statements_summary_by_digest"
# the statement's column -> (dbgauge family suffix, what it counts, scale to base units)
COLUMNS_INFO: dict[str, tuple[str, str, float]] = {
    "total": ("calls_total", "Statements executed (COUNT_STAR)", 1.0),
    "timer_wait": ("seconds_total", "Time executing statements (SUM_TIMER_WAIT)", PICOSECONDS),
    "lock_time": ("lock_seconds_total", "Time waiting for table locks (SUM_LOCK_TIME)",
                  PICOSECONDS),
    "errors": ("errors_total", "Statements that raised an error (SUM_ERRORS)", 1.0),
    "warnings": ("warnings_total", "Warnings raised (SUM_WARNINGS)", 1.0),
    "rows_affected": ("rows_affected_total", "Rows changed (SUM_ROWS_AFFECTED)", 1.0),
    "rows_sent": ("rows_sent_total", "Rows returned (SUM_ROWS_SENT)", 1.0),
    "rows_examined": ("rows_examined_total", "Rows read (SUM_ROWS_EXAMINED)", 1.0),
    "created_tmp_tables": ("tmp_tables_total", "Internal temporary tables created "
                           "(SUM_CREATED_TMP_TABLES)", 1.0),
    "created_tmp_disk_tables": ("tmp_disk_tables_total", "Internal temporary tables created "
                                "on disk (SUM_CREATED_TMP_DISK_TABLES)", 1.0),
    "select_full_join": ("select_full_joins_total", "Joins without an index "
                         "(SUM_SELECT_FULL_JOIN)", 1.0),
    "select_full_range_join": ("select_full_range_joins_total", "Joins by a range search "
                               "of a reference table (SUM_SELECT_FULL_RANGE_JOIN)", 1.0),
    "select_range": ("select_ranges_total", "Joins by a range of the first table "
                     "(SUM_SELECT_RANGE)", 1.0),
    "select_range_check": ("select_range_checks_total", "Joins without keys checking key "
                           "use after each row (SUM_SELECT_RANGE_CHECK)", 1.0),
    "select_scan": ("select_scans_total", "Joins by a full scan of the first table "
                    "(SUM_SELECT_SCAN)", 1.0),
    "sort_merge_passes": ("sort_merge_passes_total", "Sort merge passes "
                          "(SUM_SORT_MERGE_PASSES)", 1.0),
    "sort_range": ("sort_ranges_total", "Sorts by a range (SUM_SORT_RANGE)", 1.0),
    "sort_rows": ("sort_rows_total", "Rows sorted (SUM_SORT_ROWS)", 1.0),
    "sort_scan": ("sort_scans_total", "Sorts by a full scan (SUM_SORT_SCAN)", 1.0),
    "no_index_used": ("no_index_used_total", "Statements that scanned a table without an "
                      "index (SUM_NO_INDEX_USED)", 1.0),
    "no_good_index_used": ("no_good_index_used_total", "Statements that found no good "
                           "index (SUM_NO_GOOD_INDEX_USED)", 1.0),
}
SPECS = {column: MetricSpec(f"dbgauge_mysql_statements_all_{suffix}", "counter",
                            f"{what}, over every digest ({_SRC}, summed).")
         for column, (suffix, what, _) in COLUMNS_INFO.items()}
METRICS = MetricTable(*SPECS.values())


class MySQLStatementTotals(SummaryCollector):
    name = "mysql_statement_totals"
    help = ("Statement calls, time, errors, rows, temporary tables, joins and sorts summed "
            "over every digest (performance_schema); opt-in.")
    metrics = METRICS
    statement = "statement_totals"
    keys = ()
    columns = tuple(COLUMNS_INFO)
    labels = ()
    families = {column: (SPECS[column], "", scale)
                for column, (_, _, scale) in COLUMNS_INFO.items()}
    fixed_limit = 1
