-- Collector postgres_locks: backends waiting for a heavyweight lock, by lock type and mode
-- (pg_locks rows with granted = false; each waiting backend waits for exactly one lock).
-- PostgreSQL 13+. Unlike postgres_exporter's pg_locks_count, granted locks are not counted.
SELECT locktype, mode, count(DISTINCT pid) AS backends
FROM pg_locks
WHERE NOT granted AND pid IS NOT NULL
GROUP BY locktype, mode
ORDER BY locktype, mode
