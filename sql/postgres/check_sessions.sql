-- dbgauge check query-time, txn-idle, txn-time with --include/--exclude or
-- --includeuser/--excludeuser (checks/health/activity.py), PostgreSQL 13+: every client
-- backend but dbgauge's own, with its database and user (which the filters match, as
-- check_postgres' query_time, txn_idle and txn_time do) and its ages: of the running
-- statement (state active), of the open transaction, and of an idle-in-transaction
-- session. hidden: a session the role cannot see (another role's, without
-- pg_read_all_stats: backend_type, state and times NULL; its database and user are shown).
SELECT datname, usename, backend_type IS NULL AS hidden, pid,
       CASE WHEN state = 'active'
            THEN GREATEST(0, EXTRACT(EPOCH FROM now() - query_start)) END AS query_seconds,
       GREATEST(0, EXTRACT(EPOCH FROM now() - xact_start)) AS xact_seconds,
       CASE WHEN state IN ('idle in transaction', 'idle in transaction (aborted)')
            THEN GREATEST(0, EXTRACT(EPOCH FROM now() - state_change)) END AS idle_seconds
FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND (backend_type = 'client backend' OR backend_type IS NULL)
