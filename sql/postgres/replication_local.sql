-- Collector postgres_replication: this server's own side of replication (one row, both roles).
-- PostgreSQL 13+. Recovery-only functions are guarded by CASE (evaluated lazily), so the
-- statement runs on a primary too. receive_replay_bytes and lag_seconds are NULL when the
-- standby has no WAL receiver position to compare with (archive-only recovery).
-- last_replay_age_seconds is the age of the last replayed commit (0 on a primary, and
-- until one is replayed), as postgres_exporter's pg_replication_last_replay_seconds.
-- lag_seconds is 0 whenever everything received has been replayed: on an idle primary the
-- last replayed commit gets old, but the standby is not behind (postgres_exporter #385, #907).
-- While replay is behind it is the age of the last replayed commit, and NULL while no commit
-- has been replayed since the standby started (nothing to time it by; not 0).
-- The WAL receiver's silence and wal_receiver_timeout let the collector see a stalled
-- receiver (nothing received: nothing to replay, so the replay lag alone stays 0).
-- What the role cannot see: walsenders and a WAL receiver show only their pid to a role
-- without pg_read_all_stats (the other columns NULL); they are counted, not guessed at.
-- pg_stat_get_wal_senders() is what the pg_stat_replication view reads, without its join
-- to every backend's activity: a fraction of the cost for a count. Walsenders are physical
-- standbys (`standbys`) or logical ones (`logical_senders`: a subscriber's, streaming from
-- a logical slot or connected to a database), told apart as replication_standbys does.
SELECT
  rec.in_recovery,
  current_user AS role,
  CASE WHEN rec.in_recovery
       THEN GREATEST(0, pg_wal_lsn_diff(rec.receive_lsn, rec.replay_lsn))
  END AS receive_replay_bytes,
  CASE WHEN rec.in_recovery THEN EXTRACT(EPOCH FROM rec.replay_ts) END AS last_replay_timestamp,
  CASE WHEN NOT rec.in_recovery OR rec.receive_lsn IS NULL THEN NULL
       WHEN rec.receive_lsn <= rec.replay_lsn THEN 0
       WHEN rec.replay_ts IS NULL THEN NULL
       ELSE GREATEST(0, EXTRACT(EPOCH FROM now() - rec.replay_ts))
  END AS lag_seconds,
  CASE WHEN rec.in_recovery THEN pg_is_wal_replay_paused() END AS replay_paused,
  GREATEST(0, EXTRACT(EPOCH FROM now() - rec.replay_ts)) AS last_replay_age_seconds,
  w.status AS wal_receiver_status,
  w.pid IS NOT NULL AND w.status IS NULL AS wal_receiver_hidden,
  CASE WHEN w.last_msg_receipt_time IS NOT NULL  -- GREATEST would make a NULL 0
       THEN GREATEST(0, EXTRACT(EPOCH FROM now() - w.last_msg_receipt_time))
  END AS wal_receiver_last_message_age_seconds,
  CASE WHEN rec.in_recovery
       THEN (SELECT setting::float8 / 1000 FROM pg_settings WHERE name = 'wal_receiver_timeout')
  END AS wal_receiver_timeout_seconds,
  ws.standbys,
  ws.logical_senders,
  ws.standbys_hidden,
  (SELECT count(*) FROM pg_replication_slots) AS slots,
  (SELECT count(*) FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid
    WHERE d.datname = current_database()) AS subscriptions
FROM (SELECT pg_is_in_recovery() AS in_recovery,
             pg_last_wal_receive_lsn() AS receive_lsn,
             pg_last_wal_replay_lsn() AS replay_lsn,
             pg_last_xact_replay_timestamp() AS replay_ts) rec
LEFT JOIN pg_stat_wal_receiver w ON true
CROSS JOIN (SELECT count(*) FILTER (WHERE s.state <> 'backup' AND NOT l.logical) AS standbys,
                   count(*) FILTER (WHERE s.state <> 'backup' AND l.logical) AS logical_senders,
                   count(*) FILTER (WHERE s.state IS NULL) AS standbys_hidden
            FROM pg_stat_get_wal_senders() s
            CROSS JOIN LATERAL (
              SELECT EXISTS (SELECT 1 FROM pg_stat_get_activity(s.pid) a
                             WHERE a.datid IS NOT NULL)
                  OR EXISTS (SELECT 1 FROM pg_replication_slots r
                             WHERE r.active_pid = s.pid AND r.slot_type = 'logical') AS logical
            ) l) ws
