-- Collector mysql_processlist, MySQL 8.0 before 8.0.22: threads grouped by command and
-- state, with the longest time in each group; dbgauge's own connection left out. Needs
-- PROCESS to see other accounts' threads.
SELECT COALESCE(COMMAND, '') AS command, COALESCE(STATE, '') AS state,
       COUNT(*) AS threads, MAX(TIME) AS longest
  FROM information_schema.PROCESSLIST
 WHERE ID <> CONNECTION_ID()
 GROUP BY COALESCE(COMMAND, ''), COALESCE(STATE, '')
