-- Sandbox: pg-standby's physical slot on pg-primary (no row: no slot yet).
SELECT active FROM pg_replication_slots WHERE slot_name = %s;
