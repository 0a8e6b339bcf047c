-- Collector mysql_processlist, MySQL 8.0.22+ and 8.4: the same summary from
-- performance_schema.processlist, which needs no global mutex (information_schema.PROCESSLIST
-- is deprecated from 8.0.22). Needs SELECT on performance_schema and PROCESS.
SELECT COALESCE(COMMAND, '') AS command, COALESCE(STATE, '') AS state,
       COUNT(*) AS threads, MAX(TIME) AS longest
  FROM performance_schema.processlist
 WHERE ID <> CONNECTION_ID()
 GROUP BY COALESCE(COMMAND, ''), COALESCE(STATE, '')
