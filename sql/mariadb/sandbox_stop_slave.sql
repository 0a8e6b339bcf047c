-- Sandbox setup: replication is stopped before CHANGE MASTER.
STOP SLAVE;
