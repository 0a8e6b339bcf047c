-- Sandbox: a slot on pg-primary (pg-standby's physical one, pg-subscriber's logical one);
-- no row: no such slot. wal_status 'lost': its consumer can never catch up.
SELECT active, wal_status FROM pg_replication_slots WHERE slot_name = %s;
