-- dbgauge check archiver (checks/health/archiver.py), PostgreSQL 13+: WAL segments waiting
-- to be archived (.ready files in pg_wal/archive_status; pg_ls_archive_statusdir needs
-- pg_monitor) and whether archive_command is failing now: its last failure is newer than
-- its last success.
SELECT current_setting('archive_mode') AS archive_mode,
       (SELECT count(*) FROM pg_ls_archive_statusdir() s WHERE right(s.name, 6) = '.ready')
         AS ready_files,
       a.failed_count,
       a.last_failed_wal,
       GREATEST(0, EXTRACT(EPOCH FROM now() - a.last_failed_time)) AS last_failed_age,
       GREATEST(0, EXTRACT(EPOCH FROM now() - a.last_archived_time)) AS last_archived_age,
       COALESCE(a.last_failed_time > COALESCE(a.last_archived_time, '-infinity'), false)
         AS failing
FROM pg_stat_archiver a
