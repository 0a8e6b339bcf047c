-- Collector mysql_tables, MySQL 8.0/8.4 and MariaDB 10.6+: the top-N tables and views by
-- data + index bytes, with their type, engine, version, row format and create options (the
-- mysqld_exporter dialect's labels), mysql, performance_schema, information_schema and sys
-- left out. sys is left out although mysqld_exporter lists it: its ~100 views hold no data
-- or index bytes, and opening each (they read information_schema and performance_schema)
-- is most of the scan's work on a small server (MariaDB 10.11, sandbox: 6.8 ms with sys's
-- 101 views, 0.24 ms without). MySQL 8 answers from cached
-- data-dictionary statistics (information_schema_stats_expiry); MariaDB asks each table's
-- engine, which is what makes this the slow statement with many tables: it runs under the
-- target's query_timeout (max_statement_time) like every statement. Parameter: the limit
-- plus one.
SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name, TABLE_TYPE AS table_type,
       ENGINE AS engine, VERSION AS version, ROW_FORMAT AS row_format,
       CREATE_OPTIONS AS create_options,
       DATA_LENGTH AS data_length, INDEX_LENGTH AS index_length,
       DATA_FREE AS data_free, TABLE_ROWS AS table_rows
  FROM information_schema.TABLES
 WHERE TABLE_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema', 'sys')
 ORDER BY COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) DESC, TABLE_SCHEMA, TABLE_NAME
 LIMIT %s
