-- Collector mysql_processlist, MySQL 8.0.22+ and 8.4: the same summary (user, host, command,
-- state) from performance_schema.processlist, which needs no global mutex
-- (information_schema.PROCESSLIST is deprecated from 8.0.22). Needs SELECT on
-- performance_schema and PROCESS.
SELECT on performance_schema and PROCESS.
SELECT COALESCE(USER, '') AS user, SUBSTRING_INDEX(COALESCE(HOST, ''), ':', 1) AS host,
       COALESCE(COMMAND, '') AS command, COALESCE(STATE, '') AS state,
       COUNT(*) AS threads, MAX(TIME) AS longest, SUM(TIME) AS seconds
  FROM performance_schema.processlist
 WHERE ID <> CONNECTION_ID()
 GROUP BY COALESCE(USER, ''), SUBSTRING_INDEX(COALESCE(HOST, ''), ':', 1),
          COALESCE(COMMAND, ''), COALESCE(STATE, '')
