-- pgtap generate: tables, views, materialized views and sequences of the schemas %(schemas)s.
-- `extension` names the owning extension (pgTAP's own objects are left out of the snapshot;
-- other extensions' objects are listed, as pgTAP's *_are() functions see them, but not
-- detailed). PostgreSQL 13+.
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
