-- Collector postgres_wal_receiver, PostgreSQL 14+: wal_receiver.sql with the flushed
-- position under its 14+ name, flushed_lsn (received_lsn before), which the peer exports.
SELECT trim(both '''' from substring(conninfo from 'host=([^ ]*)')) AS upstream_host,
       slot_name, status,
       (receive_start_lsn - '0/0') % (2^52)::bigint AS receive_start_lsn,
       (flushed_lsn - '0/0') % (2^52)::bigint AS flushed_lsn,
       true AS has_flushed_lsn,
       receive_start_tli, received_tli,
       EXTRACT(EPOCH FROM last_msg_send_time)::float8 AS last_msg_send_time,
       EXTRACT(EPOCH FROM last_msg_receipt_time)::float8 AS last_msg_receipt_time,
       (latest_end_lsn - '0/0') % (2^52)::bigint AS latest_end_lsn,
       EXTRACT(EPOCH FROM latest_end_time)::float8 AS latest_end_time,
       substring(slot_name from 'repmgr_slot_([0-9]*)') AS upstream_node,
       pid IS NOT NULL AND status IS NULL AS hidden,
       current_user AS role
FROM pg_catalog.pg_stat_wal_receiver
