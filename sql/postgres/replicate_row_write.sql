-- dbgauge check replicate-row (checks/health/replicate_row.py), on the primary: a fresh
-- token in dbgauge's own heartbeat table (sql/schema/postgres/heartbeat.sql), never a user
-- table: the row of node_name 'dbgauge replicate-row' of this cluster, its ts the token
-- (clock_timestamp(), unique to the microsecond). Returns the token as the standby reads it.
INSERT INTO dbgauge.heartbeat (system_identifier, node_name, ts, timeline_id, wal_lsn)
SELECT s.system_identifier, 'dbgauge replicate-row', clock_timestamp(), c.timeline_id,
       pg_current_wal_lsn()
FROM pg_control_system() s, pg_control_checkpoint() c
ON CONFLICT (system_identifier, node_name)
DO UPDATE SET ts = EXCLUDED.ts, timeline_id = EXCLUDED.timeline_id, wal_lsn = EXCLUDED.wal_lsn
RETURNING (extract(epoch FROM ts) * 1000000)::bigint AS token
