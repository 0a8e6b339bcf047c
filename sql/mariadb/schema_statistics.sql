-- Collector mysql_user_statistics, MariaDB 10.11+ (userstat=ON): table statistics summed
-- per schema (over every table the account may SELECT, not only the top N tables), the
-- busiest first. Parameter: the limit plus one.
SELECT TABLE_SCHEMA AS table_schema,
       SUM(ROWS_READ) AS rows_read, SUM(ROWS_CHANGED) AS rows_changed,
       SUM(ROWS_CHANGED_X_INDEXES) AS rows_changed_x_indexes
  FROM information_schema.TABLE_STATISTICS
 GROUP BY TABLE_SCHEMA
 ORDER BY SUM(ROWS_READ) + SUM(ROWS_CHANGED) DESC, TABLE_SCHEMA
 LIMIT %s
