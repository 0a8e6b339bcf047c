-- dbgauge check replication-slots (checks/health/replication_slots.py), PostgreSQL 13+:
-- the WAL each replication slot holds back, as check_postgres' replication_slots reads
-- it: from the slot's restart_lsn to where the server is (on a standby the last WAL
-- received, else replayed; on a primary the current position); 0 for a slot that never
-- reserved WAL (restart_lsn NULL). pg_replication_slots is readable by every role.
SELECT s.slot_name, s.slot_type, s.active,
       coalesce(pg_wal_lsn_diff(
           CASE WHEN pg_is_in_recovery()
                THEN coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
                ELSE pg_current_wal_lsn() END,
           s.restart_lsn), 0)::float8 AS retained_bytes
FROM pg_replication_slots s
ORDER BY s.slot_name
