-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4: the source's executed GTID set (what a
-- replica must have applied before its rows are compared) and its server_id.
SELECT @@GLOBAL.gtid_executed AS pos, @@server_id AS server_id
