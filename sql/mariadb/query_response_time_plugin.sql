-- Collector mariadb_query_response_time, MariaDB 10.6+: is the Query Response Time plugin
-- loaded (plugin_load_add = query_response_time), and are its statistics on? The variable
-- exists only while the plugin is loaded, hence SHOW ... LIKE rather than @@.
SELECT p.PLUGIN_STATUS AS plugin_status, v.VARIABLE_VALUE AS stats
  FROM information_schema.PLUGINS p
  LEFT JOIN information_schema.GLOBAL_VARIABLES v
    ON v.VARIABLE_NAME = 'QUERY_RESPONSE_TIME_STATS'
 WHERE p.PLUGIN_NAME = 'QUERY_RESPONSE_TIME'
