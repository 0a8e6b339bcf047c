-- Collector postgres_locks: every heavyweight lock, granted or awaited, by database and mode
-- (PostgreSQL 13+): what fills the lock table (max_locks_per_transaction *
-- (max_connections + max_prepared_transactions) slots). Locks without a database
-- (transaction IDs, virtual xids, shared catalogs) are not counted, as in
-- postgres_exporter's pg_locks_count; every database has a row (mode NULL, 0 locks when it
-- holds none). This statement's own AccessShareLock on pg_locks is counted, as the
-- peer's is.
SELECT d.datname, l.mode, count(l.mode) AS locks
FROM pg_database d
LEFT JOIN pg_locks l ON l.database = d.oid
GROUP BY d.datname, l.mode
ORDER BY d.datname, l.mode
