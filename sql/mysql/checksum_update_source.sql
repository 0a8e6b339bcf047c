-- dbgauge checksum (checks/drift/), replicated method, on the source: record the source's
-- values next to each replica's own (the UPDATE replicates with the values as literals).
-- Needs UPDATE on the replicate table ({replicate}; {source_cnt}/{source_crc} are
-- source_* in dbgauge.checksums, master_* in pt-table-checksum's layout).
UPDATE {replicate} SET chunk_time = %s, {source_cnt} = %s, {source_crc} = %s
WHERE db = %s AND tbl = %s AND chunk = %s
