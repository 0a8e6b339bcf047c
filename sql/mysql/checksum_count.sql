-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: row count of a table without a usable
-- key, to decide whether it is small enough to compare as one chunk. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT COUNT(*) AS cnt FROM {table}
