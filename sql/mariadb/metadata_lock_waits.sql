-- Collector mysql_lock_waits, MariaDB 10.6+: metadata lock waits from
-- performance_schema.metadata_locks when it is filled (performance_schema on, the
-- wait/lock/metadata/sql/mdl instrument and the global_instrumentation consumer enabled --
-- the instrument is off by default on MariaDB), and in the same round trip from the thread
-- states in the processlist, used otherwise. Needs SELECT on performance_schema and PROCESS.
SELECT @@GLOBAL.performance_schema AS performance_schema,
       (SELECT ENABLED FROM performance_schema.setup_instruments
         WHERE NAME = 'wait/lock/metadata/sql/mdl') AS mdl_instrument,
       (SELECT ENABLED FROM performance_schema.setup_consumers
         WHERE NAME = 'global_instrumentation') AS global_consumer,
       (SELECT COUNT(*) FROM performance_schema.metadata_locks
         WHERE LOCK_STATUS = 'PENDING') AS waiting,
       (SELECT MAX(t.PROCESSLIST_TIME) FROM performance_schema.metadata_locks m
          JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID
         WHERE m.LOCK_STATUS = 'PENDING') AS oldest_wait_seconds,
       (SELECT COUNT(*) FROM information_schema.PROCESSLIST
         WHERE STATE LIKE 'Waiting for %metadata lock'
            OR STATE IN ('Waiting for global read lock', 'Waiting for commit lock',
                         'Waiting for backup lock')) AS processlist_waiting,
       (SELECT MAX(TIME) FROM information_schema.PROCESSLIST
         WHERE STATE LIKE 'Waiting for %metadata lock'
            OR STATE IN ('Waiting for global read lock', 'Waiting for commit lock',
                         'Waiting for backup lock')) AS processlist_oldest_wait_seconds
