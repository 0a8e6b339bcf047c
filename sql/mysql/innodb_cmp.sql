-- Collector mysql_innodb_cmp, MySQL 8.0/8.4 and MariaDB 10.6+: compression work per
-- compressed page size (times in seconds). Needs PROCESS. Parameter: a row limit.
SELECT PAGE_SIZE AS page_size, COMPRESS_OPS AS compress_ops,
       COMPRESS_OPS_OK AS compress_ops_ok, COMPRESS_TIME AS compress_time,
       UNCOMPRESS_OPS AS uncompress_ops, UNCOMPRESS_TIME AS uncompress_time
  FROM information_schema.INNODB_CMP
 ORDER BY PAGE_SIZE
 LIMIT %s
