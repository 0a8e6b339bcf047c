-- Sandbox rebuild of pg-standby: its old slot holds WAL from before; drop it if present.
SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s;
