-- Collector mysql_replication (and mysql_heartbeat's source lookup), MariaDB 10.6+: one row
-- per named connection (multi-source), Master/Slave column names plus Connection_name,
-- Gtid_IO_Pos and Gtid_Slave_Pos. Needs SLAVE MONITOR (alias REPLICA MONITOR).
SHOW ALL SLAVES STATUS
