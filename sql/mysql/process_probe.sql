-- toolkit/db/privileges.has_process, MySQL 8.0/8.4 and MariaDB 10.6+: whether the session
-- holds PROCESS, its own or through an enabled role. The server refuses INNODB_CMP (five
-- rows) without it (error 1227), where the processlist would answer with the account's own
-- threads only. The rows are read: with LIMIT 0 or an impossible WHERE MariaDB never fills
-- the table, so it never checks.
SELECT COUNT(*) AS page_sizes FROM information_schema.INNODB_CMP
