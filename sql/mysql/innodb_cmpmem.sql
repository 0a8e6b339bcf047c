-- Collector mysql_innodb_cmpmem, MySQL 8.0/8.4 and MariaDB 10.6+: compressed-page blocks
-- per page size and buffer pool instance (RELOCATION_TIME in microseconds). Needs PROCESS.
-- Parameter: a row limit.
SELECT PAGE_SIZE AS page_size, BUFFER_POOL_INSTANCE AS buffer_pool_instance,
       PAGES_USED AS pages_used, PAGES_FREE AS pages_free,
       RELOCATION_OPS AS relocation_ops, RELOCATION_TIME AS relocation_time
  FROM information_schema.INNODB_CMPMEM
 ORDER BY BUFFER_POOL_INSTANCE, PAGE_SIZE
 LIMIT %s
