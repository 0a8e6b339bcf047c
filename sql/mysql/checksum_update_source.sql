-- dbgauge checksum (checks/drift/), replicated method, on the source: record the source's
-- values next to each replica's own (the UPDATE replicates with the values as literals).
-- Needs UPDATE on dbgauge.checksums.
UPDATE dbgauge.checksums SET chunk_time = %s, source_cnt = %s, source_crc = %s
WHERE db = %s AND tbl = %s AND chunk = %s
