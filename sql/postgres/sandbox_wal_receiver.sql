-- Sandbox status: what pg-standby's WAL receiver is doing (no row: not running).
SELECT status FROM pg_stat_wal_receiver;
