-- dbgauge checksum (checks/drift/), replicated method, on the source: the chunk's count
-- and hash just computed into dbgauge.checksums. Needs SELECT on the replicate table
-- ({replicate}: dbgauge.checksums or --replicate DB.TBL).
SELECT this_cnt, this_crc FROM {replicate} WHERE db = %s AND tbl = %s AND chunk = %s
