-- Collector mysql_perf_schema_table_lock_waits, MySQL 8.0/8.4 and MariaDB 10.6+: table locks
-- per table and lock type (timers in picoseconds), mysql, performance_schema and
-- information_schema left out, the most wait time first. Needs SELECT on performance_schema.
-- Parameter: the limit plus one.
SELECT OBJECT_SCHEMA AS object_schema, OBJECT_NAME AS object_name,
       COUNT_READ_NORMAL AS count_read_normal, SUM_TIMER_READ_NORMAL AS timer_read_normal,
       COUNT_READ_WITH_SHARED_LOCKS AS count_read_with_shared_locks, SUM_TIMER_READ_WITH_SHARED_LOCKS AS timer_read_with_shared_locks,
       COUNT_READ_HIGH_PRIORITY AS count_read_high_priority, SUM_TIMER_READ_HIGH_PRIORITY AS timer_read_high_priority,
       COUNT_READ_NO_INSERT AS count_read_no_insert, SUM_TIMER_READ_NO_INSERT AS timer_read_no_insert,
       COUNT_READ_EXTERNAL AS count_read_external, SUM_TIMER_READ_EXTERNAL AS timer_read_external,
       COUNT_WRITE_ALLOW_WRITE AS count_write_allow_write, SUM_TIMER_WRITE_ALLOW_WRITE AS timer_write_allow_write,
       COUNT_WRITE_CONCURRENT_INSERT AS count_write_concurrent_insert, SUM_TIMER_WRITE_CONCURRENT_INSERT AS timer_write_concurrent_insert,
       COUNT_WRITE_LOW_PRIORITY AS count_write_low_priority, SUM_TIMER_WRITE_LOW_PRIORITY AS timer_write_low_priority,
       COUNT_WRITE_NORMAL AS count_write_normal, SUM_TIMER_WRITE_NORMAL AS timer_write_normal,
       COUNT_WRITE_EXTERNAL AS count_write_external, SUM_TIMER_WRITE_EXTERNAL AS timer_write_external
  FROM performance_schema.table_lock_waits_summary_by_table
 WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema')
 ORDER BY SUM_TIMER_WAIT DESC, COUNT_STAR DESC, OBJECT_SCHEMA, OBJECT_NAME
 LIMIT %s
