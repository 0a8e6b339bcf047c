-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: the key OFFSET rows after the
-- previous chunk's end -- the next chunk's inclusive upper end (pt-table-checksum's nibble),
-- for keys that are not a single integer column. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys} FROM {table} {index_hint} WHERE {where} ORDER BY {keys} LIMIT 1 OFFSET %s
