-- dbgauge checksum (checks/drift/), PostgreSQL 13+: the key OFFSET rows after the previous
-- chunk's end -- the next chunk's inclusive upper end, for keys that are not a single
-- integer column. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys} FROM {table} WHERE {where} ORDER BY {keys} LIMIT 1 OFFSET %s
