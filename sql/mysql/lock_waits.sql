-- Collector mysql_lock_waits, MySQL 8.0/8.4 (performance_schema.data_lock_waits replaced
-- INNODB_LOCK_WAITS in 8.0.1): which transaction waits for which, one row per pair.
-- Needs SELECT on performance_schema.data_lock_waits.
SELECT DISTINCT REQUESTING_ENGINE_TRANSACTION_ID, BLOCKING_ENGINE_TRANSACTION_ID
FROM performance_schema.data_lock_waits
