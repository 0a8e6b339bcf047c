-- dbgauge checksum (checks/drift/), PostgreSQL 13+: a table's columns, in order, with the
-- base type (domains resolved, enums as 'enum') type normalisation needs.
SELECT a.attname AS name,
       CASE WHEN t.typtype = 'e' THEN 'enum' WHEN t.typtype = 'd' THEN bt.typname
            ELSE t.typname END AS data_type,
       format_type(a.atttypid, a.atttypmod) AS column_type,
       NOT a.attnotnull AS nullable, NULL::text AS charset
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type bt ON bt.oid = t.typbasetype
WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
