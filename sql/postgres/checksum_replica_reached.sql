-- dbgauge checksum (checks/drift/), PostgreSQL 13, on a replica: has it caught up with the
-- source's WAL position %s? A standby by replay; a logical subscriber by the position its
-- apply worker last confirmed to the source's walsender (latest_end_lsn: every change
-- before it has been applied).
-- PostgreSQL 13: pg_subscription's oid is not readable without superuser (14 grants it
-- to every role), so a subscription's statistics are found by its name. subname is unique
-- only within a database: a worker is taken only if it runs in this database (its
-- pg_stat_activity row), so a namesake subscription in another database is not.
SELECT COALESCE(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                     ELSE (SELECT min(st.latest_end_lsn) FROM pg_stat_subscription st
                             JOIN pg_subscription s ON s.subname = st.subname
                             JOIN pg_database d ON d.oid = s.subdbid
                            WHERE d.datname = current_database() AND st.relid IS NULL
                              AND st.pid IN (SELECT a.pid FROM pg_stat_activity a
                                              WHERE a.datname = current_database()))
                END >= %s::pg_lsn, false) AS reached
