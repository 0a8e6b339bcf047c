-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: the MD5 of each
-- column's text (the same text the row hash is made of) for a list of keys, to name the
-- columns of a changed row. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys}, {column_hashes} FROM {table} WHERE {where}
