-- dbgauge checksum (checks/drift/), PostgreSQL 13, on a replica: is it a physical standby
-- (and is its WAL receiver streaming), or a logical subscriber (how many subscriptions in
-- this database, how many of them enabled with a running apply worker). The catalog and
-- statistics views read here need no privilege beyond CONNECT.
-- PostgreSQL 13: pg_subscription's oid is not readable without superuser (14 grants it
-- to every role), so a subscription's statistics are found by its name. subname is unique
-- only within a database: a worker is taken only if it runs in this database (its
-- pg_stat_activity row), so a namesake subscription in another database is not.
SELECT pg_is_in_recovery() AS in_recovery,
       (SELECT status FROM pg_stat_wal_receiver) AS wal_receiver,
       (SELECT count(*) FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid
         WHERE d.datname = current_database()) AS subscriptions,
       (SELECT count(*) FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid
         WHERE d.datname = current_database() AND NOT s.subenabled) AS disabled,
       (SELECT count(*) FROM pg_stat_subscription st
          JOIN pg_subscription s ON s.subname = st.subname
          JOIN pg_database d ON d.oid = s.subdbid
         WHERE d.datname = current_database() AND st.relid IS NULL
           AND st.pid IN (SELECT a.pid FROM pg_stat_activity a
                           WHERE a.datname = current_database())) AS apply_workers
