-- Collector mysql_global_variables, MySQL 8.0/8.4 and MariaDB 10.6+: every global variable
-- (about 600-700 rows; the collector keeps the numeric ones and the text the mysqld_exporter
-- dialect reads). information_schema.GLOBAL_VARIABLES is gone in MySQL 8; SHOW works
-- everywhere. Run once per `refresh` (60 s by default), not on every scrape.
SHOW GLOBAL VARIABLES
