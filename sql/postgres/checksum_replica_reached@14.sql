-- dbgauge checksum (checks/drift/), PostgreSQL 14+, on a replica: has it caught up with the
-- source's WAL position %s? A standby by replay; a logical subscriber by the position its
-- apply worker last confirmed to the source's walsender (latest_end_lsn: every change
-- before it has been applied).
SELECT COALESCE(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                     ELSE (SELECT min(st.latest_end_lsn) FROM pg_stat_subscription st
                             JOIN pg_subscription s ON s.oid = st.subid
                             JOIN pg_database d ON d.oid = s.subdbid
                            WHERE d.datname = current_database() AND st.relid IS NULL)
                END >= %s::pg_lsn, false) AS reached
