-- Collector postgres_database: pg_stat_database per database with its recovery conflicts by
-- cause (pg_stat_database_conflicts; the shared-objects row, datname NULL, has none:
-- has_conflicts false). Every row is read, the shared one included (postgres_exporter
-- exports it as datname ""). blk_read_time, blk_write_time and the session times are
-- milliseconds; timestamps are Unix seconds.
-- PostgreSQL 13: checksum_failures and checksum_last_failure (12+), no session statistics.
SELECT d.datid, d.datname, d.numbackends, d.xact_commit, d.xact_rollback, d.blks_read,
       d.blks_hit, d.tup_returned, d.tup_fetched, d.tup_inserted, d.tup_updated,
       d.tup_deleted, d.conflicts, d.temp_files, d.temp_bytes, d.deadlocks,
       d.checksum_failures, EXTRACT(EPOCH FROM d.checksum_last_failure) AS checksum_last_failure,
       d.blk_read_time, d.blk_write_time,
       EXTRACT(EPOCH FROM d.stats_reset) AS stats_reset,
       c.datid IS NOT NULL AS has_conflicts, c.confl_tablespace, c.confl_lock,
       c.confl_snapshot, c.confl_bufferpin, c.confl_deadlock
FROM pg_stat_database d
LEFT JOIN pg_stat_database_conflicts c ON c.datid = d.datid
ORDER BY d.datname NULLS FIRST
