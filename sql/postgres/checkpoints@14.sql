-- Collector postgres_checkpoints, PostgreSQL 14-16: pg_stat_bgwriter (checkpointer columns
-- included), pg_stat_wal (new in 14) and pg_stat_archiver. Times are milliseconds.
-- Statistics resets are Unix seconds (NULL if never).
-- Ages (seconds, may be a hair below 0: now() is the statement's start) are NULL while
-- nothing was ever archived / nothing ever failed; the collector clamps them at 0.
SELECT b.checkpoints_timed, b.checkpoints_req, b.checkpoint_write_time,
       b.checkpoint_sync_time, b.buffers_checkpoint, b.buffers_clean, b.maxwritten_clean,
       b.buffers_backend, b.buffers_backend_fsync, b.buffers_alloc,
       EXTRACT(EPOCH FROM b.stats_reset) AS bgwriter_stats_reset,
       w.wal_records, w.wal_fpi, w.wal_bytes, w.wal_buffers_full,
       a.archived_count, a.failed_count,
       EXTRACT(EPOCH FROM now() - a.last_archived_time) AS last_archived_age,
       EXTRACT(EPOCH FROM now() - a.last_failed_time) AS last_failed_age,
       current_setting('archive_mode') AS archive_mode
FROM pg_stat_bgwriter b CROSS JOIN pg_stat_wal w CROSS JOIN pg_stat_archiver a
