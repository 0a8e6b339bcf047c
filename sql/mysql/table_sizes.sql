-- Collector mysql_tables, MySQL 8.0/8.4 and MariaDB 10.6+: the top-N base tables by data +
-- index bytes, system schemas left out. MySQL 8 answers from cached data-dictionary
-- statistics (information_schema_stats_expiry); MariaDB asks each table's engine, which is
-- what makes this the slow statement with many tables: it runs under the target's
-- query_timeout (max_statement_time) like every statement. Parameter: the limit.
SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name,
       DATA_LENGTH AS data_length, INDEX_LENGTH AS index_length,
       DATA_FREE AS data_free, TABLE_ROWS AS table_rows
  FROM information_schema.TABLES
 WHERE TABLE_TYPE = 'BASE TABLE'
   AND TABLE_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema', 'sys')
 ORDER BY COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) DESC
 LIMIT %s
