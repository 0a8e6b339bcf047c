-- dbgauge check query-time (checks/health/activity.py), PostgreSQL 13+: the client backend
-- whose current statement has run longest (dbgauge's own session left out), and how many
-- statements run. pg_monitor sees every backend's state and query_start; the query text
-- is not read (it may hold secrets). hidden: sessions the role cannot see (another role's,
-- without pg_read_all_stats: backend_type, state and query_start NULL).
WITH active AS (
  SELECT pid, datname, usename, query_start
  FROM pg_stat_activity
  WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()
    AND query_start IS NOT NULL
)
SELECT (SELECT count(*) FROM active) AS active,
       (SELECT count(*) FROM pg_stat_get_activity(NULL) h WHERE h.backend_type IS NULL)
         AS hidden,
       current_user AS role,
       a.pid, a.datname, a.usename,
       COALESCE(GREATEST(0, EXTRACT(EPOCH FROM now() - a.query_start)), 0) AS seconds
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (SELECT * FROM active ORDER BY query_start LIMIT 1) AS a ON true
