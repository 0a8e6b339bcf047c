-- Collector postgres_database: per-database backends and transaction totals.
-- PostgreSQL 12+ has a shared-objects row with datname NULL: skip it.
SELECT datname, numbackends, xact_commit, xact_rollback
FROM pg_stat_database
WHERE datname IS NOT NULL
ORDER BY datname
