-- Collector mariadb_query_response_time, MariaDB 10.6+ with the Query Response Time plugin:
-- queries per response-time range (TIME: the range's upper bound in seconds, as text;
-- COUNT: queries in that range only; TOTAL: their summed time, text). The last row is
-- TIME = 'TOO LONG', TOTAL = 'TOO LONG'. Needs PROCESS.
SELECT TIME AS time, COUNT AS count, TOTAL AS total
  FROM information_schema.QUERY_RESPONSE_TIME
