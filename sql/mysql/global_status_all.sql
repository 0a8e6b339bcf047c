-- Collector mysql_global_status, MySQL 8.0/8.4 and MariaDB 10.6+: every status variable
-- (about 480-560 rows); the collector keeps the numeric ones.
SHOW GLOBAL STATUS
