-- dbgauge checksum --recursion-method processlist (checks/drift/discover.py), MySQL 8.0/8.4
-- and MariaDB 10.6+, on the source: the client address of every replica's binlog dump
-- thread, as pt-table-checksum finds replicas. Other users' threads need PROCESS.
SELECT host FROM information_schema.processlist WHERE command IN ('Binlog Dump', 'Binlog Dump GTID')
