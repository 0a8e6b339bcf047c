-- Collector mysql_lock_waits, MySQL 8.0/8.4 and MariaDB 10.6+: open InnoDB transactions per
-- state with the oldest age and the oldest lock wait. INNODB_TRX keeps whole seconds
-- (trx_started and trx_wait_started are truncated DATETIMEs), so a true age lies between
-- NOW(6) - started - 1 s and NOW(6) - started: the midpoint, minus 0.5 s, is exact within
-- +-0.5 s. At most one row per state, however busy the server. Needs PROCESS.
SELECT trx_state,
       COUNT(*) AS transactions,
       GREATEST(MAX(TIMESTAMPDIFF(MICROSECOND, trx_started, NOW(6))) / 1000000 - 0.5, 0)
         AS oldest_seconds,
       GREATEST(MAX(TIMESTAMPDIFF(MICROSECOND, trx_wait_started, NOW(6))) / 1000000 - 0.5, 0)
         AS oldest_wait_seconds
FROM information_schema.INNODB_TRX
GROUP BY trx_state
