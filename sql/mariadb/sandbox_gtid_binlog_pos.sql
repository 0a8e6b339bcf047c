-- Sandbox status: the primary's GTID position.
SELECT @@gtid_binlog_pos AS gtid_binlog_pos;
