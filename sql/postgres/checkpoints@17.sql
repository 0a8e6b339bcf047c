-- Collector postgres_checkpoints, PostgreSQL 17+: checkpoints moved to pg_stat_checkpointer
-- (num_timed, num_requested, write_time, sync_time, buffers_written); pg_stat_bgwriter
-- keeps buffers_clean, maxwritten_clean and buffers_alloc and lost buffers_backend*
-- (pg_stat_io has them now); pg_stat_checkpointer counts restartpoints apart
-- (restartpoints_timed, _req, _done). Before 17 checkpoints_timed and checkpoints_req counted
-- a standby's restartpoints too (a standby runs nothing else): checkpoints_timed and
-- checkpoints_req here keep that meaning (num_* + restartpoints_*), so a standby's
-- dbgauge_postgres_checkpoints_*_total do not stop at 0 on 17; num_timed and num_requested
-- are read as they are for the dialects. Resets are Unix seconds. Times are milliseconds.
-- Ages are NULL while nothing was ever archived / nothing ever failed (a hair below 0 is
-- possible: now() is the statement's start); the collector clamps them at 0.
SELECT c.num_timed + c.restartpoints_timed AS checkpoints_timed,
       c.num_requested + c.restartpoints_req AS checkpoints_req,
       c.num_timed, c.num_requested,
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
