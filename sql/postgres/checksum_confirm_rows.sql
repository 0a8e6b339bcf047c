-- dbgauge checksum (checks/drift/recheck.py confirm), PostgreSQL 13+: key and row hash of
-- a list of keys, read on the source to confirm rows that differed. A plain read: FOR SHARE
-- needs UPDATE on the table, which the checking role has not (MariaDB reads these rows
-- with a locking read: sql/mariadb/checksum_confirm_rows.sql says why). Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys}, {row_hash} AS dbgauge_row_hash FROM {table} WHERE {where} ORDER BY {keys}
