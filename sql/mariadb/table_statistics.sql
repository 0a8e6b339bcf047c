-- Collector mysql_user_statistics, MariaDB 10.11+ (userstat=ON): rows read and changed per
-- table, the busiest first. The server lists only the tables the account may SELECT.
-- Parameter: the limit plus one.
SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name,
       ROWS_READ AS rows_read, ROWS_CHANGED AS rows_changed,
       ROWS_CHANGED_X_INDEXES AS rows_changed_x_indexes
  FROM information_schema.TABLE_STATISTICS
 ORDER BY ROWS_READ + ROWS_CHANGED DESC, TABLE_SCHEMA, TABLE_NAME
 LIMIT %s
