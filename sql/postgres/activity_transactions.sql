-- Collector postgres_activity: open transactions as postgres_exporter's
-- long_running_transactions collector selects them (collector/pg_long_running_transactions.go:
-- state not idle, not autovacuum, xact_start set, dbgauge's own session left out), their
-- count and the oldest one's age in seconds (NULL when there is none); and the sessions the
-- role cannot see (another role's, without pg_read_all_stats: backend_type NULL), which
-- would make the count a guess.
SELECT count(*) FILTER (WHERE a.open) AS transactions,
       max(a.age_seconds) FILTER (WHERE a.open) AS oldest_seconds,
       count(*) FILTER (WHERE a.backend_type IS NULL) AS hidden,
       current_user AS role
FROM (SELECT state IS DISTINCT FROM 'idle' AND query NOT LIKE 'autovacuum:%'
             AND xact_start IS NOT NULL AND pid <> pg_backend_pid() AS open,
             EXTRACT(EPOCH FROM clock_timestamp() - xact_start)::float8 AS age_seconds,
             backend_type
      FROM pg_catalog.pg_stat_activity) a
