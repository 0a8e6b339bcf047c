-- Collector mysql_replication, MySQL 8.0/8.4: whether the server refuses writes, and how many
-- replicas stream its binlog right now, counted by their dump threads in
-- performance_schema.threads (SHOW REPLICAS would need REPLICATION SLAVE and lists only
-- registered replicas; information_schema.PROCESSLIST is deprecated and takes a global mutex).
SELECT @@GLOBAL.read_only AS read_only,
       @@GLOBAL.super_read_only AS super_read_only,
       (SELECT COUNT(*) FROM performance_schema.threads
         WHERE PROCESSLIST_COMMAND IN ('Binlog Dump', 'Binlog Dump GTID')) AS replicas
