-- Collector mysql_perf_schema_memory, MySQL 8.0/8.4 and MariaDB 10.5+: memory per instrument
-- (bytes allocated and freed since startup, in use now) for the instruments that allocated,
-- the most in use first. Needs SELECT on performance_schema. Parameter: the limit plus one.
SELECT EVENT_NAME AS event_name, SUM_NUMBER_OF_BYTES_ALLOC AS bytes_alloc,
       SUM_NUMBER_OF_BYTES_FREE AS bytes_free, CURRENT_NUMBER_OF_BYTES_USED AS bytes_used
  FROM performance_schema.memory_summary_global_by_event_name
 WHERE COUNT_ALLOC > 0
 ORDER BY CURRENT_NUMBER_OF_BYTES_USED DESC, EVENT_NAME
 LIMIT %s
