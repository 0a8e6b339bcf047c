-- dbgauge checksum (checks/drift/recheck.py confirm), MySQL 8.0/8.4: key and row hash of a
-- list of keys, read on the source to confirm rows that differed. MariaDB reads them with
-- a locking read (sql/mariadb/checksum_confirm_rows.sql, which says why); MySQL cannot
-- bound that read's lock wait by statement (SET_VAR does not take InnoDB variables), so
-- this is a plain read. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys}, {row_hash} AS dbgauge_row_hash FROM {table} {index_hint} WHERE {where} ORDER BY {keys}
