-- Collector mysql_statements, MySQL 8.0/8.4 and MariaDB 10.6+: the top-N statement digests
-- by total latency from performance_schema.events_statements_summary_by_digest (timers in
-- picoseconds). MySQL 8 adds columns (QUANTILE_*, QUERY_SAMPLE_*, SUM_CPU_TIME, 64-character
-- DIGEST); these are in both flavors. The first 120 characters of the normalised DIGEST_TEXT
-- and the seconds since LAST_SEEN are read for the mysqld_exporter dialect only (dbgauge's
-- own families never carry the text). Parameter: the limit plus one.
SELECT SCHEMA_NAME AS schema_name, DIGEST AS digest, LEFT(DIGEST_TEXT, 120) AS digest_text,
       TIMESTAMPDIFF(SECOND, LAST_SEEN, NOW()) AS last_seen_age,
       COUNT_STAR AS calls, SUM_TIMER_WAIT AS timer_wait, SUM_ROWS_EXAMINED AS rows_examined,
       SUM_ROWS_SENT AS rows_sent, SUM_ROWS_AFFECTED AS rows_affected, SUM_ERRORS AS errors,
       SUM_WARNINGS AS warnings, SUM_NO_INDEX_USED AS no_index_used,
       SUM_CREATED_TMP_TABLES AS tmp_tables, SUM_CREATED_TMP_DISK_TABLES AS tmp_disk_tables,
       SUM_SORT_ROWS AS sort_rows, SUM_SORT_MERGE_PASSES AS sort_merge_passes
  FROM performance_schema.events_statements_summary_by_digest
 ORDER BY SUM_TIMER_WAIT DESC
 LIMIT %s
