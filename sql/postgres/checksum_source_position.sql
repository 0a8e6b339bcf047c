-- dbgauge checksum (checks/drift/), PostgreSQL 13+, on the source: the flushed WAL
-- position (what a standby or a logical subscriber must have reached before its rows are
-- compared: walsenders send only flushed WAL). Needs nothing beyond CONNECT.
SELECT pg_current_wal_flush_lsn()::text AS pos, NULL::int AS server_id
