-- pgtap generate: primary and foreign keys of the tables in %(schemas)s, key columns in
-- key order (what col_is_pk and fk_ok compare). PostgreSQL 13+.
SELECT n.nspname AS schema,
       c.relname AS table_name,
       con.conname AS name,
       con.contype::text AS type,
       ARRAY(SELECT a.attname::text
               FROM unnest(con.conkey) WITH ORDINALITY k(attnum, i)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid
                                            AND a.attnum = k.attnum
              ORDER BY k.i) AS columns,
       rn.nspname AS ref_schema,
       rc.relname AS ref_table,
       ARRAY(SELECT a.attname::text
               FROM unnest(con.confkey) WITH ORDINALITY k(attnum, i)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid
                                            AND a.attnum = k.attnum
              ORDER BY k.i) AS ref_columns
  FROM pg_catalog.pg_constraint con
  JOIN pg_catalog.pg_class c ON c.oid = con.conrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_catalog.pg_class rc ON rc.oid = con.confrelid
  LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
 WHERE n.nspname = ANY(%(schemas)s)
   AND con.contype IN ('p', 'f')
 ORDER BY n.nspname, c.relname, con.contype DESC, con.conname;
