-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: the base tables a
-- run may compare (system schemas and dbgauge's own excluded). information_schema lists
-- only tables the user has some privilege on.
SELECT table_schema AS db, table_name AS tbl, COALESCE(table_rows, 0) AS rows_estimate,
       1 AS readable
FROM information_schema.tables
WHERE table_type = 'BASE TABLE'
  AND table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', 'dbgauge')
ORDER BY table_schema, table_name
