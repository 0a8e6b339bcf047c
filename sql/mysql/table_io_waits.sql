-- Collector mysql_tables, MySQL 8.0/8.4 and MariaDB 10.6+: table I/O wait counts and
-- times (picoseconds) per operation for the top-N tables by total wait time, the mysql and
-- performance_schema schemas left out (as mysqld_exporter does; dbgauge's own families also
-- leave out information_schema and sys). Parameter: the limit plus one.
SELECT OBJECT_SCHEMA AS table_schema, OBJECT_NAME AS table_name,
       COUNT_FETCH AS count_fetch, SUM_TIMER_FETCH AS timer_fetch,
       COUNT_INSERT AS count_insert, SUM_TIMER_INSERT AS timer_insert,
       COUNT_UPDATE AS count_update, SUM_TIMER_UPDATE AS timer_update,
       COUNT_DELETE AS count_delete, SUM_TIMER_DELETE AS timer_delete
  FROM performance_schema.table_io_waits_summary_by_table
 WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema')
 ORDER BY SUM_TIMER_WAIT DESC, COUNT_STAR DESC, OBJECT_SCHEMA, OBJECT_NAME
 LIMIT %s
