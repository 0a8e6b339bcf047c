-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: the source's rows for a list of keys,
-- printed as repair statements by --print-repair (never run by dbgauge). Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {columns} FROM {table} WHERE {where}
