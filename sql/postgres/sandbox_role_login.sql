-- Sandbox setup: the monitoring role (dbgauge); password bound on the client.
ALTER ROLE {role} WITH LOGIN PASSWORD %s;
