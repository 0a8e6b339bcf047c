-- Collector postgres_tables, PostgreSQL 13+: the connected database, and every database
-- a client may connect to (what postgres_exporter's --auto-discover-databases lists:
-- datallowconn, not a template), for the `databases` option.
SELECT current_database() AS current, d.datname
FROM pg_database d
WHERE d.datallowconn AND NOT d.datistemplate
ORDER BY d.datname
