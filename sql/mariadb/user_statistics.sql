-- Collector mysql_user_statistics, MariaDB 10.11+ (userstat=ON): the users with the most busy
-- time first. Without PROCESS the server answers with no rows, so the collector asks for
-- PROCESS first. Parameter: the limit plus one.
SELECT USER AS user,
       TOTAL_CONNECTIONS AS total_connections,
       CONCURRENT_CONNECTIONS AS concurrent_connections,
       CONNECTED_TIME AS connected_time,
       BUSY_TIME AS busy_time,
       CPU_TIME AS cpu_time,
       BYTES_RECEIVED AS bytes_received,
       BYTES_SENT AS bytes_sent,
       BINLOG_BYTES_WRITTEN AS binlog_bytes_written,
       ROWS_READ AS rows_read,
       ROWS_SENT AS rows_sent,
       ROWS_DELETED AS rows_deleted,
       ROWS_INSERTED AS rows_inserted,
       ROWS_UPDATED AS rows_updated,
       SELECT_COMMANDS AS select_commands,
       UPDATE_COMMANDS AS update_commands,
       OTHER_COMMANDS AS other_commands,
       COMMIT_TRANSACTIONS AS commit_transactions,
       ROLLBACK_TRANSACTIONS AS rollback_transactions,
       DENIED_CONNECTIONS AS denied_connections,
       LOST_CONNECTIONS AS lost_connections,
       ACCESS_DENIED AS access_denied,
       EMPTY_QUERIES AS empty_queries,
       TOTAL_SSL_CONNECTIONS AS total_ssl_connections,
       MAX_STATEMENT_TIME_EXCEEDED AS max_statement_time_exceeded
  FROM information_schema.USER_STATISTICS
 ORDER BY BUSY_TIME DESC, TOTAL_CONNECTIONS DESC, USER
 LIMIT %s
