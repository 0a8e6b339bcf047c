-- Check split-brain, MariaDB 10.6+: who this server is and whose transactions its binlog
-- holds: gtid_binlog_state keeps the last sequence number per (domain, server_id), so a
-- local write on a replica shows up with the replica's own server_id. Read on every node,
-- then again on each source after its replicas were read (a source only grows).
-- Global variables need no privilege.
SELECT @@GLOBAL.server_id AS server_id,
       @@GLOBAL.log_bin AS log_bin,
       @@GLOBAL.gtid_binlog_state AS gtid_binlog_state,
       @@GLOBAL.gtid_slave_pos AS gtid_slave_pos,
       @@GLOBAL.gtid_strict_mode AS gtid_strict_mode,
       @@GLOBAL.log_bin_basename AS log_bin_basename
