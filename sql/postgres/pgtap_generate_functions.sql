-- pgtap generate: functions and procedures in %(schemas)s. args and returns are computed
-- exactly as pgTAP's tap_funky view does (regtype text), which has_function and
-- function_returns compare against; signature names overloads for the set_eq check.
-- PostgreSQL 13+.
SELECT n.nspname AS schema,
       p.proname AS name,
       ARRAY(SELECT t::text FROM unnest(p.proargtypes::regtype[]) t) AS args,
       CASE p.proretset WHEN true THEN 'setof ' ELSE '' END
           || p.prorettype::regtype::text AS returns,
       p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'
           AS signature,
       e.extname AS extension
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  LEFT JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
                                  AND d.objid = p.oid AND d.deptype = 'e'
  LEFT JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
 WHERE n.nspname = ANY(%(schemas)s)
 ORDER BY n.nspname, p.proname, 5;
