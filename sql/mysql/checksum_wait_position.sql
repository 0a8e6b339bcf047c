-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4, on a replica: wait up to %s seconds for
-- the source's GTID set to be executed. 0 = reached, 1 = timed out.
SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s) AS result
