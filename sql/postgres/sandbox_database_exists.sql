-- Sandbox setup: does the database exist yet?
SELECT 1 AS found FROM pg_database WHERE datname = %s;
