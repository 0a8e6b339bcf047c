-- pgtap generate: user triggers (not constraint-internal ones) on tables and views in
-- %(schemas)s and the function each calls. PostgreSQL 13+.
SELECT n.nspname AS schema,
       c.relname AS table_name,
       t.tgname AS name,
       pn.nspname AS function_schema,
       p.proname AS function_name
  FROM pg_catalog.pg_trigger t
  JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
  JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
 WHERE n.nspname = ANY(%(schemas)s)
   AND NOT t.tgisinternal
 ORDER BY n.nspname, c.relname, t.tgname;
