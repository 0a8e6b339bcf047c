-- Sandbox setup, in `drift` on pg-subscriber: does the subscription exist yet?
SELECT 1 AS found FROM pg_subscription WHERE subname = %s;
