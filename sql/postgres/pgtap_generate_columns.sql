-- pgtap generate: columns of the tables and views in %(schemas)s, in attnum order, with the
-- type as format_type() prints it (what col_type_is compares), nullability and default.
-- base_type is the type under a domain, to know whether it has an equality operator.
-- PostgreSQL 13+ (attgenerated is 12+).
SELECT n.nspname AS schema,
       c.relname AS table_name,
       a.attname AS column_name,
       pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
       pg_catalog.format_type(CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END,
                              NULL) AS base_type,
       a.attnotnull AS not_null,
       a.atthasdef AS has_default,
       pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) AS default_expr,
       a.attgenerated::text AS generated
  FROM pg_catalog.pg_attribute a
  JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
  LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
 WHERE n.nspname = ANY(%(schemas)s)
   AND c.relkind IN ('r', 'p', 'v', 'm')
   AND a.attnum > 0
   AND NOT a.attisdropped
 ORDER BY n.nspname, c.relname, a.attnum;
