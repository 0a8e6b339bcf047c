-- Collector mysql_lock_waits, MySQL 8.0/8.4 and MariaDB 10.6+: age of the blocking
-- transactions (+-0.5 s, as in innodb_trx_summary) and whether their session is idle (no
-- statement running: an open transaction left holding locks). Only run when something
-- blocks; {ids} becomes one %s per blocking trx_id, every value bound. Needs PROCESS.
SELECT trx_id,
       GREATEST(TIMESTAMPDIFF(MICROSECOND, trx_started, NOW(6)) / 1000000 - 0.5, 0)
         AS age_seconds,
       trx_query IS NULL AS idle
FROM information_schema.INNODB_TRX
WHERE trx_id IN ({ids})
