-- dbgauge checksum (checks/drift/), PostgreSQL 13+: row count of a table without a usable
-- key, to decide whether it is small enough to compare as one chunk. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT COUNT(*) AS cnt FROM {table}
