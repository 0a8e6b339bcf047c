-- Collector postgres_buffercache, PostgreSQL 13+: the schema and version of the
-- pg_buffercache extension in the connected database (NULL: not created here), which
-- database that is, and who asks (for the message that says what to run). Always one row.
SELECT n.nspname AS schema, e.extversion AS version, current_database() AS database,
       current_user AS role
FROM (VALUES (1)) AS one (x)
LEFT JOIN pg_extension e ON e.extname = 'pg_buffercache'
LEFT JOIN pg_namespace n ON n.oid = e.extnamespace
