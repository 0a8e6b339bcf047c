-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: key and row hash of every row of a
-- range (the leaves of a bisection) or of a list of keys (re-checks). Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys}, {row_hash} AS dbgauge_row_hash FROM {table} {index_hint} WHERE {where} ORDER BY {keys}
