-- Collector mysql_heartbeat, MySQL 8.0/8.4 and MariaDB 10.6+: every row of a dbgauge or
-- pt-heartbeat table (one per writing server), and our own server_id to skip our own row.
-- {table} is filled in by quote_table().
SELECT server_id, ts, @@GLOBAL.server_id AS own_server_id FROM {table}
