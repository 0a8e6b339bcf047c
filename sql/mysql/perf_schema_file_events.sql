-- Collector mysql_perf_schema_file_events, MySQL 8.0/8.4 and MariaDB 10.6+: file I/O per
-- file instrument (timers in picoseconds), the most time first. Needs SELECT on
-- performance_schema. Parameter: the limit plus one.
SELECT EVENT_NAME AS event_name,
       COUNT_READ AS count_read, SUM_TIMER_READ AS sum_timer_read,
       SUM_NUMBER_OF_BYTES_READ AS sum_number_of_bytes_read,
       COUNT_WRITE AS count_write, SUM_TIMER_WRITE AS sum_timer_write,
       SUM_NUMBER_OF_BYTES_WRITE AS sum_number_of_bytes_write,
       COUNT_MISC AS count_misc, SUM_TIMER_MISC AS sum_timer_misc
  FROM performance_schema.file_summary_by_event_name
 ORDER BY SUM_TIMER_WAIT DESC, COUNT_STAR DESC, EVENT_NAME
 LIMIT %s
