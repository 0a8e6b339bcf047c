-- dbgauge checksum --replicate-check-only (checks/drift/replicate.py), MySQL 8.0/8.4 and
-- MariaDB 10.6+, on a replica: per table, what the replicate table holds -- chunks, rows,
-- and the chunks that differ by pt-table-checksum's own test (count or crc differ, or only
-- one of them is NULL). A chunk whose source_cnt and source_crc are both NULL is
-- half-written (the run stopped between its REPLACE and the UPDATE that copies the source's
-- values: an interrupted run, a write blocked by FLUSH TABLES WITH READ LOCK): counted as
-- incomplete, never as differing. {replicate} is a quote_ident name; {source_*} are source_*
-- or pt's master_* columns. Needs SELECT on the replicate table.
SELECT db, tbl, COUNT(*) AS chunks, SUM(this_cnt) AS total_rows,
       SUM(CASE WHEN {source_cnt} IS NULL AND {source_crc} IS NULL THEN 0
                WHEN {source_cnt} <> this_cnt OR {source_crc} <> this_crc
                  OR ISNULL({source_crc}) <> ISNULL(this_crc) THEN 1 ELSE 0 END) AS differing,
       SUM(CASE WHEN {source_cnt} IS NULL AND {source_crc} IS NULL THEN 1 ELSE 0 END)
         AS incomplete,
       MAX(ts) AS last_ts
FROM {replicate}
GROUP BY db, tbl
ORDER BY db, tbl
