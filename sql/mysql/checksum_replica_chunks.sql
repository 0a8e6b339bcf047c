-- dbgauge checksum (checks/drift/), replicated method, on a replica: every chunk of a
-- table with the replica's own count/hash and the source's. Needs SELECT on
-- dbgauge.checksums.
SELECT chunk, lower_boundary, upper_boundary, this_cnt, this_crc, source_cnt, source_crc
FROM dbgauge.checksums WHERE db = %s AND tbl = %s ORDER BY chunk
