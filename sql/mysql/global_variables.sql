-- Collector mysql_global_variables, MySQL 8.0/8.4 and MariaDB 10.6+: the allow-list's
-- variables only (bound as one tuple, %s -> ('max_connections', ...)), filtered by the
-- server rather than shipping ~650 rows per scrape (information_schema.GLOBAL_VARIABLES is
-- gone in MySQL 8; SHOW ... WHERE works everywhere).
SHOW GLOBAL VARIABLES WHERE Variable_name IN %s
