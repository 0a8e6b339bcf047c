-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: a table's columns,
-- in order, with the type facts type normalisation needs (checks/drift/normalize.py).
SELECT column_name AS name, LOWER(data_type) AS data_type, LOWER(column_type) AS column_type,
       is_nullable = 'YES' AS nullable, character_set_name AS charset
FROM information_schema.columns
WHERE table_schema = %s AND table_name = %s
ORDER BY ordinal_position
