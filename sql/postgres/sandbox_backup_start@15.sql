-- Sandbox: begin a non-exclusive base backup of pg-primary (pg-standby's clone where
-- the major has no pg_basebackup); PostgreSQL 15 renamed it pg_backup_start.
SELECT pg_backup_start(%s, true) AS lsn;
