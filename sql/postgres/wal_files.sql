-- Collector postgres_checkpoints: WAL segment files in pg_wal and their total size
-- (PostgreSQL 13+; pg_ls_waldir() needs pg_monitor). Only segment files count (24 hex
-- digits): not .history, .partial or archive_status. What fills the disk when archiving
-- or a replication slot holds WAL back.
SELECT count(*) AS wal_segments, COALESCE(sum(size), 0) AS wal_size_bytes
FROM pg_ls_waldir()
WHERE name ~ '^[0-9A-F]{24}$'
