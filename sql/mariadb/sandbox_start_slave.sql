-- Sandbox: start replication (after CHANGE MASTER, or when both threads stopped).
START SLAVE;
