-- Collector postgres_checkpoints, PostgreSQL 17+: checkpoints moved to pg_stat_checkpointer
-- (num_timed, num_requested, write_time, sync_time, buffers_written); pg_stat_bgwriter
-- keeps buffers_clean, maxwritten_clean and buffers_alloc and lost buffers_backend*
-- (pg_stat_io has them now); it gains restartpoints_*. Resets are Unix seconds. Times are milliseconds. Ages are NULL while nothing was
-- ever archived / nothing ever failed (a hair below 0 is possible: now() is the
-- statement's start); the collector clamps them at 0.
SELECT c.num_timed AS checkpoints_timed, c.num_requested AS checkpoints_req,
       c.write_time AS checkpoint_write_time, c.sync_time AS checkpoint_sync_time,
       c.buffers_written AS buffers_checkpoint, c.restartpoints_timed,
       c.restartpoints_req, c.restartpoints_done,
       EXTRACT(EPOCH FROM c.stats_reset) AS checkpointer_stats_reset,
       EXTRACT(EPOCH FROM b.stats_reset) AS bgwriter_stats_reset,
       b.buffers_clean, b.maxwritten_clean, b.buffers_alloc,
       w.wal_records, w.wal_fpi, w.wal_bytes, w.wal_buffers_full,
       a.archived_count, a.failed_count,
       EXTRACT(EPOCH FROM now() - a.last_archived_time) AS last_archived_age,
       EXTRACT(EPOCH FROM now() - a.last_failed_time) AS last_failed_age,
       current_setting('archive_mode') AS archive_mode
FROM pg_stat_checkpointer c CROSS JOIN pg_stat_bgwriter b CROSS JOIN pg_stat_wal w
     CROSS JOIN pg_stat_archiver a
