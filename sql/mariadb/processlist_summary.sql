-- Collector mysql_processlist, MariaDB 10.6+: threads grouped by user, client host (port
-- removed), command and state, with the longest and the summed time in each group;
-- dbgauge's own connection left out. Needs PROCESS to see other accounts' threads. (Here so
-- MariaDB does not fall back to the MySQL 8.0.22 file.)
SELECT COALESCE(USER, '') AS user, SUBSTRING_INDEX(COALESCE(HOST, ''), ':', 1) AS host,
       COALESCE(COMMAND, '') AS command, COALESCE(STATE, '') AS state,
       COUNT(*) AS threads, MAX(TIME) AS longest, SUM(TIME) AS seconds
  FROM information_schema.PROCESSLIST
 WHERE ID <> CONNECTION_ID()
 GROUP BY COALESCE(USER, ''), SUBSTRING_INDEX(COALESCE(HOST, ''), ':', 1),
          COALESCE(COMMAND, ''), COALESCE(STATE, '')
