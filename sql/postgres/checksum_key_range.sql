-- dbgauge checksum (checks/drift/), PostgreSQL 13+: lowest and highest value of a
-- single-column integer key, for arithmetic chunk ranges (no boundary queries). Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT MIN({keys}) AS lo, MAX({keys}) AS hi FROM {table}
