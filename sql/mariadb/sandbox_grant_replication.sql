-- Sandbox setup: the account the replica replicates as (repl).
GRANT REPLICATION SLAVE ON *.* TO %s@'%%';
