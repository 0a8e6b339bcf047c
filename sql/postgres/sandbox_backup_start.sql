-- Sandbox: begin a non-exclusive base backup of pg-primary (pg-standby's clone where
-- the major has no pg_basebackup); PostgreSQL 13 and 14 spell it pg_start_backup.
SELECT pg_start_backup(%s, true, false) AS lsn;
