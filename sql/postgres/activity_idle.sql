-- Collector postgres_activity: each idle session (state idle, idle in transaction, idle in
-- transaction (aborted)) but dbgauge's own, with how long it has been in that state
-- (CURRENT_TIMESTAMP - state_change), exact and rounded to whole seconds as
-- postgres_exporter's process_idle collector sums them (collector/pg_process_idle.go:
-- SUM(EXTRACT(EPOCH FROM ...)::bigint)); the histogram is made from these rows.
SELECT state, application_name,
       EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - state_change))::float8 AS idle_seconds,
       EXTRACT(EPOCH FROM (CURRENT_TIMESTAMP - state_change))::bigint AS idle_whole_seconds
FROM pg_catalog.pg_stat_activity
WHERE state ~ '^idle' AND pid <> pg_backend_pid()
ORDER BY pid
