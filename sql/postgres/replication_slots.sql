-- Collector postgres_replication: replication slots (pg_replication_slots), PostgreSQL 13+.
-- retained_bytes: WAL kept for the slot, from its restart_lsn to this server's position
-- (NULL for a slot that never reserved WAL). safe_wal_size is NULL when
-- max_slot_wal_keep_size = -1 (no limit) or the slot is lost. database is '' for a physical
-- slot. For the dialects: this server's WAL position (received on a standby) and the slot's
-- confirmed_flush_lsn (0 for a physical slot) in bytes from 0/0.
SELECT
  r.slot_name,
  r.slot_type,
  COALESCE(r.database, '') AS database,
  r.active,
  r.wal_status,
  GREATEST(0, pg_wal_lsn_diff(
    CASE WHEN pg_is_in_recovery()
         THEN COALESCE(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
         ELSE pg_current_wal_lsn()
    END, r.restart_lsn)) AS retained_bytes,
  r.safe_wal_size,
  pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()
                       ELSE pg_current_wal_lsn() END, '0/0') AS current_lsn_bytes,
  pg_wal_lsn_diff(COALESCE(r.confirmed_flush_lsn, '0/0'), '0/0') AS confirmed_flush_lsn_bytes
FROM pg_replication_slots r
ORDER BY r.slot_name
