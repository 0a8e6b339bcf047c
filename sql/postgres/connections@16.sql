-- Collector postgres_database, PostgreSQL 16+: connections.sql plus reserved_connections
-- (the slots only superusers and roles with pg_use_reserved_connections may take, new in
-- 16) as role_reserved_connections; reserved_connections is superuser_reserved_connections.
-- client connections by state, and the limits (PostgreSQL 13+).
-- Only client backends count here (background workers, autovacuum and WAL senders do not
-- take client slots the same way). dbgauge's own connection is included: it is one.
-- pg_stat_get_activity(NULL) is pg_stat_activity's source, without the view's joins.
-- The limits ride on every row (there is always one: dbgauge's own connection).
-- Sessions the role cannot see (another role's, without pg_read_all_stats: backend_type and
-- state NULL) are one row with state NULL: counted, never taken for a state.
SELECT a.state, count(*) AS connections,
       current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int AS reserved_connections,
       current_setting('reserved_connections')::int AS role_reserved_connections,
       current_user AS role
FROM pg_stat_get_activity(NULL) a
WHERE (a.backend_type = 'client backend' AND a.state IS NOT NULL) OR a.backend_type IS NULL
GROUP BY a.state
ORDER BY a.state
