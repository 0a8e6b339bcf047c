-- Collector mysql_perf_schema_file_instances, MySQL 8.0/8.4 and MariaDB 10.6+: reads and
-- writes per file, the most bytes first. Needs SELECT on performance_schema. Parameter: the
-- limit plus one.
SELECT FILE_NAME AS file_name, EVENT_NAME AS event_name,
       COUNT_READ AS count_read, COUNT_WRITE AS count_write,
       SUM_NUMBER_OF_BYTES_READ AS sum_number_of_bytes_read,
       SUM_NUMBER_OF_BYTES_WRITE AS sum_number_of_bytes_write
  FROM performance_schema.file_summary_by_instance
 ORDER BY SUM_NUMBER_OF_BYTES_READ + SUM_NUMBER_OF_BYTES_WRITE DESC, COUNT_STAR DESC,
          FILE_NAME, EVENT_NAME
 LIMIT %s
