-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+, replicated method: pt-table-checksum's
-- statement. Run with binlog_format=STATEMENT on the source, so every replica re-executes
-- the SELECT on its own rows at the same point of the binlog. Writes only the replicate table
-- ({replicate}: dbgauge.checksums, or the one named by --replicate; checks/drift/replicate.py).
-- Needs SELECT on the table and INSERT, DELETE on the replicate table.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
REPLACE INTO {replicate}
  (db, tbl, chunk, chunk_index, lower_boundary, upper_boundary, this_cnt, this_crc)
SELECT %s, %s, %s, %s, %s, %s, {aggregates} FROM {table} {index_hint} WHERE {where}
