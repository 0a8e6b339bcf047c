-- Collector postgres_database: pg_stat_database per database, PostgreSQL 13+.
-- The shared-objects row (datname NULL, PostgreSQL 12+) is left out. blk_read_time and
-- blk_write_time are milliseconds and stay 0 unless track_io_timing is on.
SELECT datname, numbackends, xact_commit, xact_rollback, blks_read, blks_hit,
       tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted,
       temp_files, temp_bytes, deadlocks, conflicts, blk_read_time, blk_write_time,
       EXTRACT(EPOCH FROM stats_reset) AS stats_reset
FROM pg_stat_database
WHERE datname IS NOT NULL
ORDER BY datname
