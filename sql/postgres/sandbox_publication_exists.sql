-- Sandbox setup, in `drift` on pg-primary: does the publication exist yet?
SELECT 1 AS found FROM pg_publication WHERE pubname = %s;
