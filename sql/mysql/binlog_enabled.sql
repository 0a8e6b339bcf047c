-- Collector mysql_binlog, MySQL 8.0/8.4 and MariaDB 10.6+: is the binary log on? (SHOW
-- BINARY LOGS is an error without it.)
SELECT @@GLOBAL.log_bin AS log_bin
