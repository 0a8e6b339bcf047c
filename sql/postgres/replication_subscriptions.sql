-- Collector postgres_replication: the connected database's logical-replication
-- subscriptions (this server as a subscriber), PostgreSQL 13. One row per subscription,
-- with its apply worker's pg_stat_subscription row (relid IS NULL; table-sync workers have
-- one each) when a worker runs. The publisher's walsender reports its WAL end
-- (latest_end_lsn, at latest_end_time) whenever it has sent everything it had: so data
-- received beyond that position (lag_bytes) is what arrived since the subscription was last
-- known caught up, and lag_seconds is the time since then -- 0 when nothing arrived since,
-- so an idle publisher (keepalives every wal_sender_timeout / 2) shows no lag. Both NULL
-- while no worker runs. subconninfo, the one column normal roles may not read, is not
-- selected.
-- PostgreSQL 13: pg_subscription's oid is not readable without superuser (14 grants it
-- to every role), so a subscription's statistics are found by its name. subname is unique
-- only within a database: a worker is taken only if it runs in this database (its
-- pg_stat_activity row), so a namesake subscription in another database is not.
SELECT s.subname,
       s.subenabled AS enabled,
       st.pid IS NOT NULL AS worker_running,
       CASE WHEN st.pid IS NOT NULL  -- GREATEST would turn the NULLs into 0
            THEN GREATEST(0, pg_wal_lsn_diff(st.received_lsn, st.latest_end_lsn))
       END AS lag_bytes,
       CASE WHEN st.pid IS NULL THEN NULL
            WHEN st.received_lsn <= st.latest_end_lsn THEN 0
            ELSE GREATEST(0, EXTRACT(EPOCH FROM now() - st.latest_end_time))
       END AS lag_seconds
FROM pg_subscription s
JOIN pg_database d ON d.oid = s.subdbid AND d.datname = current_database()
LEFT JOIN pg_stat_subscription st ON st.subname = s.subname AND st.relid IS NULL
      AND st.pid IN (SELECT a.pid FROM pg_stat_activity a
                      WHERE a.datname = current_database())
ORDER BY s.subname
