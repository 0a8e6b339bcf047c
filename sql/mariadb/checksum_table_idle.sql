-- dbgauge checksum (checks/drift/), MariaDB 10.6+: seconds since the table was last
-- written (InnoDB keeps UPDATE_TIME in memory; NULL when unwritten since the server
-- started). A table written moments ago probably has a write in flight to the replicas, so
-- the whole-table pre-check would only fail: such tables go straight to the chunk walk.
SELECT TIMESTAMPDIFF(MICROSECOND, update_time, NOW(6)) / 1e6 AS idle_seconds
FROM information_schema.tables
WHERE table_schema = %s AND table_name = %s
