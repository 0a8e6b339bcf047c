-- Collector mysql_lock_waits, MySQL 8.0/8.4 and MariaDB 10.6+: metadata lock requests
-- waiting right now and the longest wait, from performance_schema.metadata_locks, with
-- whether that table is being filled (performance_schema on, the wait/lock/metadata/sql/mdl
-- instrument and the global_instrumentation consumer enabled: default on MySQL 8, off on
-- MariaDB). Needs SELECT on performance_schema.
SELECT @@GLOBAL.performance_schema AS performance_schema,
       (SELECT ENABLED FROM performance_schema.setup_instruments
         WHERE NAME = 'wait/lock/metadata/sql/mdl') AS mdl_instrument,
       (SELECT ENABLED FROM performance_schema.setup_consumers
         WHERE NAME = 'global_instrumentation') AS global_consumer,
       (SELECT COUNT(*) FROM performance_schema.metadata_locks
         WHERE LOCK_STATUS = 'PENDING') AS waiting,
       (SELECT MAX(t.PROCESSLIST_TIME) FROM performance_schema.metadata_locks m
          JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID
         WHERE m.LOCK_STATUS = 'PENDING') AS oldest_wait_seconds
