-- dbgauge checksum (checks/drift/), replicated method, on the source: forget a table's
-- chunks from an earlier run (replicated, so replicas forget them too). Needs DELETE on
-- the replicate table ({replicate}: dbgauge.checksums or --replicate DB.TBL).
DELETE FROM {replicate} WHERE db = %s AND tbl = %s
