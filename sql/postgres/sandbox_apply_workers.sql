-- Sandbox: pg-subscriber's apply workers (relid NULL: not a table-sync worker).
SELECT count(pid) AS workers FROM pg_stat_subscription WHERE relid IS NULL;
