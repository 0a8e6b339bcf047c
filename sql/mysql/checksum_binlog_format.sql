-- dbgauge checksum (checks/drift/), replicated method, on the source: log this session's
-- checksum statements as statements, so replicas recompute them. MariaDB needs BINLOG ADMIN
-- (or SUPER); MySQL 8 SYSTEM_VARIABLES_ADMIN or SESSION_VARIABLES_ADMIN.
SET SESSION binlog_format = 'STATEMENT'
