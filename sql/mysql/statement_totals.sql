-- Collector mysql_statement_totals, MySQL 8.0/8.4 and MariaDB 10.6+: the grand sums of
-- performance_schema.events_statements_summary_by_digest (every digest, timers in
-- picoseconds), as mysqld_exporter's perf_schema.eventsstatementssum reads them. Needs SELECT
-- on performance_schema. Parameter: 2 (one row; the summary collectors' limit plus one).
SELECT SUM(COUNT_STAR) AS total,
       SUM(SUM_CREATED_TMP_DISK_TABLES) AS created_tmp_disk_tables,
       SUM(SUM_CREATED_TMP_TABLES) AS created_tmp_tables,
       SUM(SUM_ERRORS) AS errors,
       SUM(SUM_LOCK_TIME) AS lock_time,
       SUM(SUM_NO_GOOD_INDEX_USED) AS no_good_index_used,
       SUM(SUM_NO_INDEX_USED) AS no_index_used,
       SUM(SUM_ROWS_AFFECTED) AS rows_affected,
       SUM(SUM_ROWS_EXAMINED) AS rows_examined,
       SUM(SUM_ROWS_SENT) AS rows_sent,
       SUM(SUM_SELECT_FULL_JOIN) AS select_full_join,
       SUM(SUM_SELECT_FULL_RANGE_JOIN) AS select_full_range_join,
       SUM(SUM_SELECT_RANGE) AS select_range,
       SUM(SUM_SELECT_RANGE_CHECK) AS select_range_check,
       SUM(SUM_SELECT_SCAN) AS select_scan,
       SUM(SUM_SORT_MERGE_PASSES) AS sort_merge_passes,
       SUM(SUM_SORT_RANGE) AS sort_range,
       SUM(SUM_SORT_ROWS) AS sort_rows,
       SUM(SUM_SORT_SCAN) AS sort_scan,
       SUM(SUM_TIMER_WAIT) AS timer_wait,
       SUM(SUM_WARNINGS) AS warnings
  FROM performance_schema.events_statements_summary_by_digest
 LIMIT %s
