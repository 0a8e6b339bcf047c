-- Collector mysql_replication, MariaDB 10.6+: whether the server refuses writes (MariaDB has
-- no super_read_only), and how many replicas stream its binlog right now, counted by their
-- dump threads. Other users' threads are visible with PROCESS only.
SELECT @@GLOBAL.read_only AS read_only,
       (SELECT COUNT(*) FROM information_schema.PROCESSLIST
         WHERE COMMAND IN ('Binlog Dump', 'Binlog Dump GTID')) AS replicas
