-- dbgauge checksum (checks/drift/), MariaDB 10.6+: the source's GTID position (what a
-- replica must have applied before its rows are compared) and its server_id.
SELECT @@gtid_binlog_pos AS pos, @@server_id AS server_id
