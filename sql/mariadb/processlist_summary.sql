-- Collector mysql_processlist, MariaDB 10.6+: threads grouped by command and state, with
-- the longest time in each group; dbgauge's own connection left out. Needs PROCESS to see
-- other accounts' threads. (Here so MariaDB does not fall back to the MySQL 8.0.22 file.)
SELECT COALESCE(COMMAND, '') AS command, COALESCE(STATE, '') AS state,
       COUNT(*) AS threads, MAX(TIME) AS longest
  FROM information_schema.PROCESSLIST
 WHERE ID <> CONNECTION_ID()
 GROUP BY COALESCE(COMMAND, ''), COALESCE(STATE, '')
