-- pgtap generate: indexes of the tables in %(schemas)s with their full definition
-- (pg_get_indexdef: method, uniqueness, keys, predicate). PostgreSQL 13+.
SELECT n.nspname AS schema,
       ct.relname AS table_name,
       ci.relname AS name,
       pg_catalog.pg_get_indexdef(ci.oid) AS definition
  FROM pg_catalog.pg_index x
  JOIN pg_catalog.pg_class ct ON ct.oid = x.indrelid
  JOIN pg_catalog.pg_class ci ON ci.oid = x.indexrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = ct.relnamespace
 WHERE n.nspname = ANY(%(schemas)s)
 ORDER BY n.nspname, ct.relname, ci.relname;
