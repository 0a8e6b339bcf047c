-- pgtap generate: user schemas (system and extension-owned ones aside). PostgreSQL 13+.
SELECT n.nspname AS schema
  FROM pg_catalog.pg_namespace n
 WHERE n.nspname !~ '^pg_'
   AND n.nspname <> 'information_schema'
   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                    WHERE d.classid = 'pg_catalog.pg_namespace'::regclass
                      AND d.objid = n.oid AND d.deptype = 'e')
 ORDER BY 1;
