-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: unique indexes of a
-- table with their columns in index order; checks.drift.chunks.choose_key picks the primary
-- key, else a unique index on NOT NULL columns without prefixes.
SELECT index_name, non_unique, index_name = 'PRIMARY' AS is_primary, seq_in_index,
       column_name, nullable = 'YES' AS nullable, sub_part IS NOT NULL AS prefix
FROM information_schema.statistics
WHERE table_schema = %s AND table_name = %s AND non_unique = 0
ORDER BY index_name, seq_in_index
