-- Collector mysql_binlog, MySQL 8.0/8.4 and MariaDB 10.6+: the binary log files and their
-- sizes (Log_name, File_size; MySQL 8 adds Encrypted). Needs REPLICATION CLIENT (MySQL) or
-- BINLOG MONITOR (MariaDB 10.5+).
SHOW BINARY LOGS
