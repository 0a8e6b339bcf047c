-- Sandbox setup: the monitoring account (dbgauge): what its collectors and checks read.
GRANT PROCESS, REPLICATION CLIENT, SLAVE MONITOR, SELECT ON *.* TO %s@'%%';
