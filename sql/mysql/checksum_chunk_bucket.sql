-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: count and hash of one key
-- bucket of a chunk (direct method, one integer key). checks/drift/sql.py joins one such
-- statement per bucket with UNION ALL: each a range read, which costs about what one hash of
-- the whole chunk does, where a GROUP BY on `key DIV width` costs a fifth more (a temporary
-- table). Needs SELECT on the table.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT %s AS dbgauge_bucket, {aggregates} FROM {table} {index_hint} WHERE {where}
