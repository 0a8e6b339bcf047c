-- Collector mysql_lock_waits, MySQL 8.0/8.4 and MariaDB 10.6+: metadata lock waits from the
-- thread states when performance_schema.metadata_locks is not instrumented. TIME is the
-- seconds spent in the current state. Other users' threads are visible with PROCESS only.
SELECT COUNT(*) AS waiting, MAX(TIME) AS oldest_wait_seconds
FROM information_schema.PROCESSLIST
WHERE STATE LIKE 'Waiting for %metadata lock'
   OR STATE IN ('Waiting for global read lock', 'Waiting for commit lock',
                'Waiting for backup lock')
