-- Collector mysql_lock_waits, MariaDB 10.6+: which transaction waits for which, one row per
-- pair, with the column names of MySQL's performance_schema.data_lock_waits so one parser
-- reads both. Needs PROCESS.
SELECT DISTINCT requesting_trx_id AS REQUESTING_ENGINE_TRANSACTION_ID,
                blocking_trx_id AS BLOCKING_ENGINE_TRANSACTION_ID
FROM information_schema.INNODB_LOCK_WAITS
