-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: count and hash of one chunk
-- (direct method, one integer key) per bucket of keys (key DIV width), so a chunk that differs
-- names the few buckets to look into without being read again. Needs SELECT on the table.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys} DIV %s AS dbgauge_bucket, {aggregates} FROM {table} {index_hint} WHERE {where}
GROUP BY dbgauge_bucket
