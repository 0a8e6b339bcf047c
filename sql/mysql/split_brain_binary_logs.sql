-- Check split-brain, MySQL 8.0/8.4 and MariaDB 10.6+: the binlog files, oldest first, to
-- find the first errant transaction on a replica. Needs REPLICATION CLIENT (MySQL) or
-- BINLOG MONITOR (MariaDB); without it the errant GTIDs are still reported.
SHOW BINARY LOGS
