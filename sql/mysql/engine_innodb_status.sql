-- Collector mysql_innodb, MySQL 8.0/8.4 and MariaDB 10.6+: the InnoDB monitor text, parsed by
-- parse_innodb_status(). Only run when neither the status variables nor the enabled
-- INNODB_METRICS counters give the checkpoint age or history list length. Needs PROCESS.
SHOW ENGINE INNODB STATUS
