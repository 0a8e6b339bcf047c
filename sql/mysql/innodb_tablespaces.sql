-- Collector mysql_innodb_tablespaces, MySQL 8.0/8.4: each InnoDB tablespace's id, row format,
-- type and sizes, the largest allocation first (NULL formats and types read 'NONE', as
-- mysqld_exporter writes them). Needs PROCESS. Parameter: the limit plus one.
SELECT NAME AS name, IFNULL(ROW_FORMAT, 'NONE') AS row_format,
       IFNULL(SPACE_TYPE, 'NONE') AS space_type,
       SPACE AS space, FILE_SIZE AS file_size, ALLOCATED_SIZE AS allocated_size
  FROM information_schema.INNODB_TABLESPACES
 ORDER BY ALLOCATED_SIZE DESC, NAME
 LIMIT %s
