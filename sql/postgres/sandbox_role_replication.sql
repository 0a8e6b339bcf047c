-- Sandbox setup: the role pg-standby streams as (repl); password bound on the client.
ALTER ROLE {role} WITH LOGIN REPLICATION PASSWORD %s;
