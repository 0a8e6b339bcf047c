-- Collector mysql_replication (and mysql_heartbeat's source lookup), MySQL 8.0.0-8.0.21:
-- one row per channel, Master/Slave column names. Needs REPLICATION CLIENT.
SHOW SLAVE STATUS
