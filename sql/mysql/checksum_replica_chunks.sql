-- dbgauge checksum (checks/drift/), replicated method, on a replica: every chunk of a
-- table with the replica's own count/hash and the source's. Needs SELECT on
-- the replicate table ({replicate}; {source_*}: source_* or pt's master_* columns).
SELECT chunk, lower_boundary, upper_boundary, this_cnt, this_crc,
       {source_cnt} AS source_cnt, {source_crc} AS source_crc
FROM {replicate} WHERE db = %s AND tbl = %s ORDER BY chunk
