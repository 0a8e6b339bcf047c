-- Collector postgres_statements, PostgreSQL 13+: the schema pg_stat_statements is installed
-- in within the connected database (no row: not created here), and whether its view can be
-- read (it errors when the library is not in shared_preload_libraries). A role without
-- pg_read_all_stats sees its own statements only (others' have a NULL queryid): sees_all.
SELECT n.nspname AS schema,
       current_setting('shared_preload_libraries') AS preload,
       pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS sees_all,
       current_user AS role
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'pg_stat_statements'
