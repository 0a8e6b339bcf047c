-- dbgauge checksum --recursion-method hosts (checks/drift/discover.py), MariaDB 10.6+, on
-- the source: replicas that registered (report_host, report_port). Needs REPLICATION
-- MASTER ADMIN (or SUPER).
SHOW SLAVE HOSTS
