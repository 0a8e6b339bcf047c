-- dbgauge checksum (checks/drift/), replicated method, on the source: forget a table's
-- chunks from an earlier run (replicated, so replicas forget them too). Needs DELETE on
-- dbgauge.checksums.
DELETE FROM dbgauge.checksums WHERE db = %s AND tbl = %s
