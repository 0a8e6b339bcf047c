-- dbgauge checksum (checks/drift/), PostgreSQL 13+: valid unique indexes of a table
-- without expressions or predicates, with their key columns in index order;
-- checks.drift.chunks.choose_key picks the primary key, else one on NOT NULL columns.
SELECT ic.relname AS index_name, NOT i.indisunique AS non_unique, i.indisprimary AS is_primary,
       k.ord AS seq_in_index, a.attname AS column_name, NOT a.attnotnull AS nullable,
       false AS prefix
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class ic ON ic.oid = i.indexrelid
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE n.nspname = %s AND c.relname = %s AND i.indisunique AND i.indisvalid
  AND i.indpred IS NULL AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts
ORDER BY ic.relname, k.ord
