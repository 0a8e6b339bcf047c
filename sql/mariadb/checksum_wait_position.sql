-- dbgauge checksum (checks/drift/), MariaDB 10.6+, on a replica: wait up to %s seconds for
-- the SQL thread to apply the source's GTID position. 0 = reached, -1 = timed out.
SELECT MASTER_GTID_WAIT(%s, %s) AS result
