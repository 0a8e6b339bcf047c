-- Collector mysql_perf_schema_index_io_waits, MySQL 8.0/8.4 and MariaDB 10.6+: row
-- operations per index (timers in picoseconds; INDEX_NAME NULL for use without an index),
-- mysql and performance_schema left out, the most wait time first. Needs SELECT on
-- performance_schema. Parameter: the limit plus one.
SELECT OBJECT_SCHEMA AS object_schema, OBJECT_NAME AS object_name,
       INDEX_NAME AS index_name,
       COUNT_FETCH AS count_fetch, SUM_TIMER_FETCH AS timer_fetch,
       COUNT_INSERT AS count_insert, SUM_TIMER_INSERT AS timer_insert,
       COUNT_UPDATE AS count_update, SUM_TIMER_UPDATE AS timer_update,
       COUNT_DELETE AS count_delete, SUM_TIMER_DELETE AS timer_delete
  FROM performance_schema.table_io_waits_summary_by_index_usage
 WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema')
 ORDER BY SUM_TIMER_WAIT DESC, COUNT_STAR DESC, OBJECT_SCHEMA, OBJECT_NAME, INDEX_NAME
 LIMIT %s
