-- Collectors mysql_innodb and mysql_engine_innodb_status, MySQL 8.0/8.4 and MariaDB 10.6+:
-- the InnoDB monitor text. mysql_innodb parses it with parse_innodb_status() only when
-- neither the status variables nor the enabled INNODB_METRICS counters give the checkpoint
-- age or history list length; mysql_engine_innodb_status (opt-in) reads it at every scrape.
-- Needs PROCESS.
SHOW ENGINE INNODB STATUS
