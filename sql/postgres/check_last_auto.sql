-- dbgauge check last-autovacuum / last-autoanalyze (checks/health/last_auto.py),
-- PostgreSQL 13+: every table of the connected database (catalogs too, as
-- check_postgres' last_autovacuum; not information_schema) and the seconds since
-- autovacuum last vacuumed / analyzed it (NULL: never since the statistics were reset).
-- owner: the database's or relation's owner, which --includeuser/--excludeuser match
-- (check_postgres' $USERWHERECLAUSE on datdba / relowner).
SELECT current_database() AS datname, n.nspname AS schemaname, c.relname,
       pg_get_userbyid(c.relowner) AS owner,
       EXTRACT(EPOCH FROM now() - pg_stat_get_last_autovacuum_time(c.oid))::float8
         AS autovacuum_age,
       EXTRACT(EPOCH FROM now() - pg_stat_get_last_autoanalyze_time(c.oid))::float8
         AS autoanalyze_age
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname <> 'information_schema'
ORDER BY n.nspname, c.relname
