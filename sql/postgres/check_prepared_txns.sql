-- dbgauge check prepared-txns (checks/health/prepared_txns.py), PostgreSQL 13+: every
-- prepared (two-phase) transaction, its database and age in seconds. A forgotten one
-- holds its locks and the xmin horizon until COMMIT/ROLLBACK PREPARED.
SELECT database, gid, EXTRACT(EPOCH FROM now() - prepared)::float8 AS age_seconds
FROM pg_prepared_xacts
ORDER BY prepared
