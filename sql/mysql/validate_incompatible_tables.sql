-- validate innodb-cluster --live (issue 8): user tables Group Replication cannot replicate:
-- not InnoDB, or without a primary key (or a unique key on NOT NULL columns only).
SELECT t.TABLE_SCHEMA AS table_schema, t.TABLE_NAME AS table_name, t.ENGINE AS engine,
       (EXISTS (SELECT 1 FROM information_schema.STATISTICS s
                 WHERE s.TABLE_SCHEMA = t.TABLE_SCHEMA AND s.TABLE_NAME = t.TABLE_NAME
                   AND s.NON_UNIQUE = 0
                   AND NOT EXISTS (SELECT 1 FROM information_schema.STATISTICS s2
                                     JOIN information_schema.COLUMNS c
                                       ON c.TABLE_SCHEMA = s2.TABLE_SCHEMA
                                      AND c.TABLE_NAME = s2.TABLE_NAME
                                      AND c.COLUMN_NAME = s2.COLUMN_NAME
                                    WHERE s2.TABLE_SCHEMA = s.TABLE_SCHEMA
                                      AND s2.TABLE_NAME = s.TABLE_NAME
                                      AND s2.INDEX_NAME = s.INDEX_NAME
                                      AND c.IS_NULLABLE = 'YES'))) AS has_primary_key
  FROM information_schema.TABLES t
 WHERE t.TABLE_TYPE = 'BASE TABLE'
   AND t.TABLE_SCHEMA NOT IN ('mysql', 'sys', 'information_schema', 'performance_schema',
                              'mysql_innodb_cluster_metadata')
HAVING engine <> 'InnoDB' OR has_primary_key = 0
 ORDER BY table_schema, table_name
 LIMIT 1000
