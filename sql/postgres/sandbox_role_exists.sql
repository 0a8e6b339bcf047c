-- Sandbox setup: does the role exist yet?
SELECT 1 AS found FROM pg_roles WHERE rolname = %s;
