-- dbgauge check last-vacuum / last-analyze (checks/health/maintenance.py), PostgreSQL
-- 13+: each user table of the connected database and the seconds since it was last
-- vacuumed / analyzed, by hand or by autovacuum (NULL: never since the statistics were
-- reset). pg_stat_user_tables needs no privilege.
-- owner: the database's or relation's owner, which --includeuser/--excludeuser match
-- (check_postgres' $USERWHERECLAUSE on datdba / relowner).
SELECT current_database() AS datname, schemaname, relname,
       (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = relid) AS owner,
       EXTRACT(EPOCH FROM now() - GREATEST(last_vacuum, last_autovacuum))::float8
         AS vacuum_age,
       EXTRACT(EPOCH FROM now() - GREATEST(last_analyze, last_autoanalyze))::float8
         AS analyze_age
FROM pg_stat_user_tables
ORDER BY schemaname, relname
