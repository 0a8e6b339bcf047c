-- dbgauge check time-sync (checks/health/time_sync.py): the server's clock, in epoch
-- seconds with microseconds (MySQL and MariaDB).
SELECT UNIX_TIMESTAMP(NOW(6)) AS epoch
