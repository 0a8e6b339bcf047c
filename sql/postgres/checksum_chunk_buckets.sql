-- dbgauge checksum (checks/drift/), PostgreSQL 13+: count and hash of one chunk (direct method,
-- one integer key) per bucket of keys (key / width, truncated towards zero as MySQL's DIV), so
-- a chunk that differs names the few buckets to look into without being read again. Needs
-- SELECT on the table.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys}::bigint / %s::bigint AS dbgauge_bucket, {aggregates} FROM {table} WHERE {where}
GROUP BY 1
