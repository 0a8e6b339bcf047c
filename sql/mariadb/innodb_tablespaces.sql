-- Collector mysql_innodb_tablespaces, MariaDB 10.5+: each InnoDB tablespace's id, row format
-- and sizes, the largest allocation first (INNODB_SYS_TABLESPACES has no SPACE_TYPE since
-- 10.5, MDEV-19940: '' as mysqld_exporter reads it; a NULL ROW_FORMAT reads 'NONE').
-- Needs PROCESS. Parameter: the limit plus one.
SELECT NAME AS name, IFNULL(ROW_FORMAT, 'NONE') AS row_format, '' AS space_type,
       SPACE AS space, FILE_SIZE AS file_size, ALLOCATED_SIZE AS allocated_size
  FROM information_schema.INNODB_SYS_TABLESPACES
 ORDER BY ALLOCATED_SIZE DESC, NAME
 LIMIT %s
