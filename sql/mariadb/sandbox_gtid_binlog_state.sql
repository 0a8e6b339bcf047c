-- Sandbox: which (domain, server_id) streams a server's binlog holds, to find a replica's
-- errant transactions (those its primary never wrote).
SELECT @@gtid_binlog_state AS gtid_binlog_state;
