-- pgtap generate: tables, views, materialized views and sequences of the schemas %(schemas)s.
-- `extension` names the owning extension (a pg_depend row of type 'e'): extension members
-- are left out of the file (their set follows the extension's version, so the major).
-- `definition` is a view's text as this server prints it: the file re-creates it as a
-- temporary view to compare definitions as the server running it prints them.
-- PostgreSQL 13+.
SELECT n.nspname AS schema,
       c.relname AS name,
       c.relkind::text AS kind,
       e.extname AS extension,
       CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid, true) END
           AS definition
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass
                                  AND d.objid = c.oid AND d.deptype = 'e'
  LEFT JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
 WHERE n.nspname = ANY(%(schemas)s)
   AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
 ORDER BY n.nspname, c.relname;
