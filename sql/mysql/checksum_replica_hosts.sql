-- dbgauge checksum --recursion-method hosts (checks/drift/discover.py), MySQL 8.0 before
-- 8.0.22, on the source: replicas that registered (report_host, report_port).
-- Needs REPLICATION SLAVE.
SHOW SLAVE HOSTS
