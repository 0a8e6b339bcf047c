-- Sandbox: pg-standby's physical replication slot on pg-primary, holding WAL from now on
-- (a standby cloned through the backup API streams from the backup's start).
SELECT pg_create_physical_replication_slot(%s, true);
