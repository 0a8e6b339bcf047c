-- Collector mysql_innodb, MySQL 8.0/8.4: the enabled INNODB_METRICS counters. MySQL names
-- the on/off column STATUS ('enabled'/'disabled'); MariaDB's file uses ENABLED. Needs PROCESS.
SELECT NAME AS name, SUBSYSTEM AS subsystem, TYPE AS type, COUNT AS count, COMMENT AS comment
FROM information_schema.INNODB_METRICS
WHERE STATUS = 'enabled'
