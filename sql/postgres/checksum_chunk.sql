-- dbgauge checksum (checks/drift/), PostgreSQL 13+: count and hash of one chunk (keys in one
-- range) on the source and on each replica (direct method). Needs SELECT on the table.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {aggregates} FROM {table} WHERE {where}
