-- Collector mysql_innodb, MySQL 8.0/8.4 and MariaDB 10.6+: every Innodb_* status variable
-- (about 70-110 rows). The LIKE pattern is applied server-side.
SHOW GLOBAL STATUS LIKE 'Innodb\_%'
