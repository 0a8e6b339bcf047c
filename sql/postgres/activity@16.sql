-- Collector postgres_database, PostgreSQL 16+: activity.sql plus reserved_connections
-- (the slots only superusers and roles with pg_use_reserved_connections may take, new in
-- 16) as role_reserved_connections; reserved_connections is superuser_reserved_connections.
-- backends by database and state, and the age of the oldest
-- open transaction in each (PostgreSQL 13+). Every backend with a database and a state
-- counts, as in pg_stat_activity (background workers and walsenders of a database
-- included; dbgauge's own connection too, `active` while it runs this); `client` says
-- which rows are client backends (dbgauge_postgres_connections). max_xact_seconds is NULL
-- when no backend of the group is in a transaction. pg_stat_get_activity(NULL) is
-- pg_stat_activity's source; only pg_database is joined, for the names. The limits ride
-- on every row (there is always one: dbgauge's own connection). Sessions whose activity the
-- role cannot see (another role's, without pg_read_all_stats: backend_type and state NULL)
-- make their own rows, state and client NULL: counted, never taken for a state.
SELECT d.datname, a.state, a.backend_type = 'client backend' AS client,
       count(*) AS backends,
       max(EXTRACT(EPOCH FROM now() - a.xact_start))::float8 AS max_xact_seconds,
       current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int AS reserved_connections,
       current_setting('reserved_connections')::int AS role_reserved_connections,
       current_user AS role
FROM pg_stat_get_activity(NULL) a
LEFT JOIN pg_database d ON d.oid = a.datid
WHERE a.state IS NOT NULL OR a.backend_type IS NULL
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
