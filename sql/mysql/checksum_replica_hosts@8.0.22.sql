-- dbgauge checksum --recursion-method hosts (checks/drift/discover.py), MySQL 8.0.22+
-- (SHOW SLAVE HOSTS is gone in 8.4), on the source: replicas that registered
-- (report_host, report_port). Needs REPLICATION SLAVE.
SHOW REPLICAS
