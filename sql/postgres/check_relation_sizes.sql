-- dbgauge check relation-size / table-size / index-size / indexes-size /
-- total-relation-size (checks/health/relation_size.py), PostgreSQL 13+: the connected
-- database's relations and their sizes by check_postgres' four size functions (each only
-- for the relation kinds check_postgres applies it to; NULL for the others). Sizes are
-- read from the files: no privilege on the relation is needed.
-- owner: the database's or relation's owner, which --includeuser/--excludeuser match
-- (check_postgres' $USERWHERECLAUSE on datdba / relowner).
SELECT n.nspname AS schemaname, c.relname, c.relkind::text AS relkind,
       pg_get_userbyid(c.relowner) AS owner,
       pg_relation_size(c.oid) AS relation_size,
       CASE WHEN c.relkind IN ('r', 'm') THEN pg_table_size(c.oid) END AS table_size,
       CASE WHEN c.relkind IN ('r', 't', 'm') THEN pg_indexes_size(c.oid) END AS indexes_size,
       CASE WHEN c.relkind IN ('r', 'm') THEN pg_total_relation_size(c.oid) END
         AS total_relation_size
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 't', 'i', 'm')
ORDER BY n.nspname, c.relname
