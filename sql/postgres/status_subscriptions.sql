-- dbgauge status (checks/status), PostgreSQL 13+: this database's logical subscriptions and
-- whether their apply worker runs. pg_subscription's columns but subconninfo are readable
-- by every role; the upstream is found by the subscription's name among the primaries'
-- walsenders (application_name defaults to it).
SELECT s.subname AS subscription,
       s.subenabled AS enabled,
       EXISTS (SELECT 1 FROM pg_stat_subscription w
               WHERE w.subid = s.oid AND w.relid IS NULL AND w.pid IS NOT NULL) AS worker
FROM pg_subscription s
WHERE s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY s.subname
