-- Collector mysql_perf_schema_waits, MySQL 8.0/8.4 and MariaDB 10.6+: waits and wait time
-- (picoseconds) per wait instrument, the most waited on first. Needs SELECT on
-- performance_schema. Parameter: the limit plus one (to tell a truncated list).
SELECT EVENT_NAME AS event_name, COUNT_STAR AS count_star, SUM_TIMER_WAIT AS sum_timer_wait
  FROM performance_schema.events_waits_summary_global_by_event_name
 ORDER BY SUM_TIMER_WAIT DESC, COUNT_STAR DESC, EVENT_NAME
 LIMIT %s
