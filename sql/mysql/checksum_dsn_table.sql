-- dbgauge checksum --recursion-method dsn=D=db,t=tbl (checks/drift/discover.py), MySQL
-- 8.0/8.4 and MariaDB 10.6+, on the source: pt-table-checksum's DSN table (id, parent_id,
-- dsn), ordered by id as pt does. {dsn_table} is a quote_ident name. Needs SELECT on it.
SELECT dsn FROM {dsn_table} ORDER BY id
