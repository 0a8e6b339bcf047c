-- dbgauge checksum (checks/drift/), replicated method, on the source: the chunk's count
-- and hash just computed into dbgauge.checksums. Needs SELECT on dbgauge.checksums.
SELECT this_cnt, this_crc FROM dbgauge.checksums WHERE db = %s AND tbl = %s AND chunk = %s
