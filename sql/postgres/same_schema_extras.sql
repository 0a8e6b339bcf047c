-- dbgauge check same-schema (checks/health/same_schema.py): what pgtap generate's
-- snapshot (pgtap_generate_*.sql, read first) does not hold, as (kind, name, detail)
-- rows: every constraint of the tables in %(schemas)s with its definition (check,
-- unique, exclusion as well as the keys), each function's body digest (pgtap generate
-- compares signatures and return types only), each trigger's definition, and the
-- database's extensions with their versions. Extension members are left out, as there.
-- PostgreSQL 13+.
SELECT 'constraint' AS kind,
       n.nspname || '.' || c.relname || '.' || con.conname AS name,
       pg_catalog.pg_get_constraintdef(con.oid, true) AS detail
  FROM pg_catalog.pg_constraint con
  JOIN pg_catalog.pg_class c ON c.oid = con.conrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = ANY(%(schemas)s)
UNION ALL
SELECT 'function body',
       n.nspname || '.' || p.proname || '('
           || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')',
       md5(coalesce(p.prosrc, '') || coalesce(p.probin, ''))
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = ANY(%(schemas)s)
   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                    WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid
                      AND d.deptype = 'e')
UNION ALL
SELECT 'trigger definition', n.nspname || '.' || c.relname || '.' || t.tgname,
       pg_catalog.pg_get_triggerdef(t.oid, true)
  FROM pg_catalog.pg_trigger t
  JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = ANY(%(schemas)s)
   AND NOT t.tgisinternal
UNION ALL
SELECT 'extension', e.extname, e.extversion
  FROM pg_catalog.pg_extension e
 ORDER BY 1, 2
