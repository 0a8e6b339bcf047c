-- Check split-brain, MySQL 8.0/8.4: who this server is and which transactions it holds
-- (gtid_executed). Read on every node, then again on each source after its replicas were
-- read: a source only gains GTIDs, so that order cannot report a false errant transaction.
-- Global variables need no privilege.
SELECT @@GLOBAL.server_id AS server_id,
       @@GLOBAL.server_uuid AS server_uuid,
       @@GLOBAL.log_bin AS log_bin,
       @@GLOBAL.gtid_mode AS gtid_mode,
       @@GLOBAL.gtid_executed AS gtid_executed,
       @@GLOBAL.log_bin_basename AS log_bin_basename
