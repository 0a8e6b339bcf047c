-- dbgauge checksum (checks/drift/), PostgreSQL 13+: count and hash of one key bucket of a chunk
-- (direct method, one integer key). checks/drift/sql.py joins one such statement per bucket
-- with UNION ALL: each a range read, together a Parallel Append that costs about what one hash
-- of the whole chunk does, where a GROUP BY on the bucket (estimated to make a group of every
-- row) sorts the chunk and costs about 70 % more. Needs SELECT on the table.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT %s::bigint AS dbgauge_bucket, {aggregates} FROM {table} WHERE {where}
