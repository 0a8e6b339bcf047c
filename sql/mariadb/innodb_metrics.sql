-- Collector mysql_innodb, MariaDB 10.6+: the enabled INNODB_METRICS counters. MariaDB names
-- the on/off column ENABLED (1/0) where MySQL has STATUS. Needs PROCESS.
SELECT NAME AS name, SUBSYSTEM AS subsystem, TYPE AS type, COUNT AS count, COMMENT AS comment
FROM information_schema.INNODB_METRICS
WHERE ENABLED = 1
