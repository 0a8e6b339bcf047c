-- Collector postgres_locks: lock waits, blockers, old and idle transactions (one row).
-- PostgreSQL 13: pg_locks has no waitstart column, so the oldest wait is measured from the
-- start of the waiting statement (state_change), an upper bound of the real wait.
-- Blockers come from pg_blocking_pids(), called only for backends that wait on a lock.
-- Ages are 0 when nothing waits / no transaction is open, so alert rules need no absent().
-- dbgauge's own session is left out (it is always in a transaction while it runs this).
-- pg_stat_get_activity(NULL) is the pg_stat_activity view's source, without the
-- view's joins to pg_database and pg_authid that no column here needs.
-- hidden_sessions: the sessions whose activity the role cannot see (another role's, without
-- pg_read_all_stats: backend_type, state and times NULL); every age and count above then
-- describes only what it sees, and the collector says so instead of reporting them.
WITH activity AS (
  SELECT pid, backend_type, state, wait_event_type, xact_start, state_change
  FROM pg_stat_get_activity(NULL)
  WHERE pid <> pg_backend_pid()
), waiting AS (
  SELECT pid, pg_blocking_pids(pid) AS blockers, state_change
  FROM activity
  WHERE wait_event_type = 'Lock'
), blockers AS (
  SELECT DISTINCT unnest(blockers) AS pid FROM waiting
)
SELECT
  current_user AS role,
  (SELECT count(*) FROM activity WHERE backend_type IS NULL) AS hidden_sessions,
  (SELECT count(*) FROM waiting) AS waiting_backends,
  (SELECT count(*) FROM waiting WHERE cardinality(blockers) > 0) AS blocked_backends,
  (SELECT count(*) FROM blockers) AS blocking_backends,
  (SELECT count(*) FROM blockers b
    WHERE NOT EXISTS (SELECT 1 FROM waiting w
                      WHERE w.pid = b.pid AND cardinality(w.blockers) > 0)) AS root_blockers,
  (SELECT COALESCE(GREATEST(0, EXTRACT(EPOCH FROM max(now() - state_change))), 0)
     FROM waiting) AS oldest_wait_seconds,
  (SELECT COALESCE(GREATEST(0, EXTRACT(EPOCH FROM max(now() - xact_start))), 0)
     FROM activity WHERE backend_type = 'client backend') AS oldest_xact_seconds,
  (SELECT count(*) FROM activity
    WHERE state IN ('idle in transaction', 'idle in transaction (aborted)'))
    AS idle_in_transaction,
  (SELECT COALESCE(GREATEST(0, EXTRACT(EPOCH FROM max(now() - state_change))), 0)
     FROM activity WHERE state IN ('idle in transaction', 'idle in transaction (aborted)'))
    AS idle_in_transaction_oldest_seconds
