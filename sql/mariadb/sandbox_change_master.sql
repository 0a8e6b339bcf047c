-- Sandbox setup: the replica follows the primary by GTID; port, user and password
-- bound as values.
CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER=%s,
  MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;
