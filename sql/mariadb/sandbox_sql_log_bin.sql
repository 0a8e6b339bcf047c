-- Sandbox setup: accounts stay out of the binlog (0), the databases are
-- replicated on purpose (1), so the replica gets no errant GTIDs.
SET SESSION sql_log_bin = %s;
