-- dbgauge checksum (checks/drift/), PostgreSQL 13+: the tables a run may compare (system
-- schemas and dbgauge's own excluded; partitions are compared through their parent), and
-- whether this user may read them: SELECT on the table and USAGE on its schema (without
-- it, naming the table fails), so such a table is reported unchecked, not the whole run.
SELECT n.nspname AS db, c.relname AS tbl, GREATEST(c.reltuples, 0)::bigint AS rows_estimate,
       has_table_privilege(c.oid, 'SELECT') AND has_schema_privilege(n.oid, 'USAGE')
         AS readable
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname NOT IN ('information_schema', 'dbgauge') AND left(n.nspname, 3) <> 'pg_'
ORDER BY n.nspname, c.relname
