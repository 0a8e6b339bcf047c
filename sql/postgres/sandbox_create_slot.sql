-- Sandbox: pg-standby's physical replication slot on pg-primary.
SELECT pg_create_physical_replication_slot(%s);
