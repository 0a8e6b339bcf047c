-- Check split-brain, PostgreSQL 13+ (pg_monitor): the cluster's identity
-- (pg_control_system), this server's role and timeline, its WAL position (insert position
-- on a primary, received-else-replayed on a standby), its replay position, and where its
-- WAL receiver streams from. Read on every node, then again on each upstream after its
-- standbys were read (an upstream's position only grows). Role-specific functions are
-- guarded by CASE, which PostgreSQL evaluates lazily. A role without pg_read_all_stats sees
-- the WAL receiver's pid only (receiver_hidden): a standby's timeline is then the last
-- restartpoint's, which may trail the one it replays: not compared.
SELECT s.system_identifier::text AS system_identifier,
       pg_is_in_recovery() AS in_recovery,
       CASE WHEN pg_is_in_recovery()
            THEN COALESCE(w.received_tli, c.timeline_id)
            ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int
       END AS timeline,
       (CASE WHEN pg_is_in_recovery()
             THEN GREATEST(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
             ELSE pg_current_wal_insert_lsn()
        END)::text AS wal_lsn,
       pg_last_wal_replay_lsn()::text AS replay_lsn,
       w.sender_host,
       w.sender_port,
       w.pid IS NOT NULL AND w.status IS NULL AS receiver_hidden,
       current_user AS role
FROM pg_control_system() s
CROSS JOIN pg_control_checkpoint() c
LEFT JOIN pg_stat_wal_receiver w ON true
