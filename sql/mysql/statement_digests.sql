-- Collector mysql_statements, MySQL 8.0/8.4 and MariaDB 10.6+: the top-N statement digests
-- by total latency from performance_schema.events_statements_summary_by_digest (timers in
-- picoseconds; the digest text is never read). MySQL 8 adds columns (QUANTILE_*, QUERY_SAMPLE_*,
-- SUM_CPU_TIME, 64-character DIGEST); these are in both flavors. Parameter: the limit.
SELECT SCHEMA_NAME AS schema_name, DIGEST AS digest, COUNT_STAR AS calls,
       SUM_TIMER_WAIT AS timer_wait, SUM_ROWS_EXAMINED AS rows_examined,
       SUM_ROWS_SENT AS rows_sent, SUM_ERRORS AS errors, SUM_NO_INDEX_USED AS no_index_used
  FROM performance_schema.events_statements_summary_by_digest
 ORDER BY SUM_TIMER_WAIT DESC
 LIMIT %s
