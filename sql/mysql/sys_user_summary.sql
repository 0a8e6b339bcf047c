-- Collector mysql_sys_user_summary, MySQL 8.0/8.4 and MariaDB 10.6+ (the sys schema): per
-- account user ('background' for the server's own threads) statements, their latency and
-- table scans, file I/O, connections, distinct hosts and memory (timers in picoseconds), the
-- most statement latency first. Needs SELECT on sys and performance_schema. Parameter: the
-- limit plus one.
SELECT user AS account_user, statements AS statements, statement_latency AS statement_latency,
       table_scans AS table_scans, file_ios AS file_ios, file_io_latency AS file_io_latency,
       current_connections AS current_connections, total_connections AS total_connections,
       unique_hosts AS unique_hosts, current_memory AS current_memory,
       total_memory_allocated AS total_memory_allocated
  FROM sys.`x$user_summary`
 ORDER BY statement_latency DESC, user
 LIMIT %s
