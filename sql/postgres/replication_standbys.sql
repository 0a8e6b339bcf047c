-- Collector postgres_replication: per connected standby, PostgreSQL 13+. Reads
-- pg_stat_get_wal_senders() (the source of the pg_stat_replication view) and looks up only
-- the walsenders' own application_name, instead of the view's join to every backend.
-- Lag in bytes is measured from this server's WAL position: the current insert position on
-- a primary, the last received (else replayed) position on a cascading standby.
-- write_lag/flush_lag/replay_lag are NULL once a standby has caught up and gone idle.
-- pg_basebackup's walsenders (state 'backup') are not standbys and are left out.
-- `logical` tells a logical walsender (a subscriber's, pg_recvlogical's) from a physical
-- standby's: it streams from a logical slot (the slot's active_pid), or it is connected to
-- a database (a physical walsender never is; the slot may not be acquired yet at startup).
-- Both are visible to any role. The collector and the checks count physical ones as
-- standbys; the status page links subscribers through the logical ones.
-- For the dialects: the walsender's pid and client address, and on a primary the current
-- WAL position in bytes and its distance to the standby's replay position, unclamped
-- (postgres_exporter's pg_stat_replication_*; NULL on a cascading standby), and when the
-- standby last replied (Unix seconds). For check lag: how long ago it replied, and this
-- server's wal_receiver_status_interval (a standby replies at least that often, idle or not;
-- standbys are usually configured as their primary is), and wal_sender_timeout (after half
-- of it without a reply the walsender asks for one: a working standby answers at once).
WITH here AS (
  SELECT CASE WHEN pg_is_in_recovery()
              THEN COALESCE(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
              ELSE pg_current_wal_lsn()
         END AS lsn
)
SELECT
  COALESCE(NULLIF(a.application_name, ''), 'pid-' || s.pid::text) AS application_name,
  s.state,
  s.sync_state,
  GREATEST(0, pg_wal_lsn_diff(here.lsn, s.sent_lsn)) AS sent_lag_bytes,
  GREATEST(0, pg_wal_lsn_diff(here.lsn, s.write_lsn)) AS write_lag_bytes,
  GREATEST(0, pg_wal_lsn_diff(here.lsn, s.flush_lsn)) AS flush_lag_bytes,
  GREATEST(0, pg_wal_lsn_diff(here.lsn, s.replay_lsn)) AS replay_lag_bytes,
  EXTRACT(EPOCH FROM s.write_lag) AS write_lag_seconds,
  EXTRACT(EPOCH FROM s.flush_lag) AS flush_lag_seconds,
  EXTRACT(EPOCH FROM s.replay_lag) AS replay_lag_seconds,
  s.pid,
  a.datid IS NOT NULL OR EXISTS (
    SELECT 1 FROM pg_replication_slots r WHERE r.active_pid = s.pid AND r.slot_type = 'logical'
  ) AS logical,
  COALESCE(host(a.client_addr), '') AS client_addr,
  CASE WHEN NOT pg_is_in_recovery()
       THEN pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') END AS current_lsn_bytes,
  CASE WHEN NOT pg_is_in_recovery()
       THEN pg_wal_lsn_diff(pg_current_wal_lsn(), s.replay_lsn) END AS replay_diff_bytes,
  EXTRACT(EPOCH FROM s.reply_time) AS reply_time,
  CASE WHEN s.reply_time IS NOT NULL  -- GREATEST would make a NULL 0
       THEN GREATEST(0, EXTRACT(EPOCH FROM now() - s.reply_time)) END AS reply_age_seconds,
  (SELECT setting::float8 FROM pg_settings WHERE name = 'wal_receiver_status_interval')
    AS status_interval_seconds,
  (SELECT setting::float8 / 1000 FROM pg_settings WHERE name = 'wal_sender_timeout')
    AS sender_timeout_seconds
FROM pg_stat_get_wal_senders() s
CROSS JOIN here
LEFT JOIN LATERAL pg_stat_get_activity(s.pid) a ON true
WHERE s.state <> 'backup'
ORDER BY 1, s.pid
