-- Collector mysql_replication (and mysql_heartbeat's source lookup), MySQL 8.0.22+ and 8.4
-- (where SHOW SLAVE STATUS no longer exists): one row per channel, Source/Replica column
-- names. Needs REPLICATION CLIENT.
SHOW REPLICA STATUS
