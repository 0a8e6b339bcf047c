-- Collector postgres_wal_receiver, PostgreSQL 13+: the WAL receiver of a standby (no row on
-- a primary), its columns as postgres_exporter's stat_wal_receiver collector reads them
-- (collector/pg_stat_walreceiver.go): the upstream host from conninfo's host=, LSNs as bytes
-- from 0/0 modulo 2^52, times in Unix seconds, repmgr's node id from a repmgr_slot_N slot
-- name. flushed_lsn is there from 13 on (received_lsn before; the peer checks for it). A
-- role without pg_read_all_stats sees the pid only (status NULL): hidden.
SELECT trim(both '''' from substring(conninfo from 'host=([^ ]*)')) AS upstream_host,
       slot_name, status,
       (receive_start_lsn - '0/0') % (2^52)::bigint AS receive_start_lsn,
       (flushed_lsn - '0/0') % (2^52)::bigint AS flushed_lsn,
       receive_start_tli, received_tli,
       EXTRACT(EPOCH FROM last_msg_send_time)::float8 AS last_msg_send_time,
       EXTRACT(EPOCH FROM last_msg_receipt_time)::float8 AS last_msg_receipt_time,
       (latest_end_lsn - '0/0') % (2^52)::bigint AS latest_end_lsn,
       EXTRACT(EPOCH FROM latest_end_time)::float8 AS latest_end_time,
       substring(slot_name from 'repmgr_slot_([0-9]*)') AS upstream_node,
       pid IS NOT NULL AND status IS NULL AS hidden,
       current_user AS role
FROM pg_catalog.pg_stat_wal_receiver
