-- Sandbox: a rebuilt replica starts a new binlog file once it has replayed the primary's, as one
-- restored from a backup would (tools that read its binlog start from the newest files).
FLUSH BINARY LOGS;
