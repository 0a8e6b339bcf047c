-- Sandbox: is the replica replicating (Slave_IO_Running, Slave_SQL_Running, errors)?
SHOW SLAVE STATUS;
