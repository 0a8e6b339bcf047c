-- Collector mysql_status: a handful of server-wide counters and gauges.
-- Works on MySQL 5.7+/8.x and MariaDB 10.x (SHOW ... WHERE filters server-side).
SHOW GLOBAL STATUS WHERE Variable_name IN (
  'Uptime', 'Threads_connected', 'Threads_running', 'Questions', 'Connections',
  'Aborted_connects', 'Aborted_clients', 'Slow_queries', 'Max_used_connections'
)
