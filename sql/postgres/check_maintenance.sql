-- dbgauge check last-vacuum / last-analyze (checks/health/maintenance.py), PostgreSQL 13+:
-- in the connected database, the user table whose most recent vacuum (by hand or by
-- autovacuum) is the oldest, and the same for analyze; tables never vacuumed / analyzed
-- are counted apart (they have no age; NULL when no table was). pg_stat_user_tables
-- needs no privilege.
WITH t AS (
  SELECT quote_ident(schemaname) || '.' || quote_ident(relname) AS name,
         GREATEST(last_vacuum, last_autovacuum) AS vacuumed,
         GREATEST(last_analyze, last_autoanalyze) AS analyzed
  FROM pg_stat_user_tables
)
SELECT (SELECT count(*) FROM t) AS tables,
       (SELECT EXTRACT(EPOCH FROM now() - min(vacuumed)) FROM t) AS vacuum_age,
       (SELECT name FROM t WHERE vacuumed IS NOT NULL ORDER BY vacuumed, name LIMIT 1)
         AS vacuum_table,
       (SELECT count(*) FROM t WHERE vacuumed IS NULL) AS vacuum_never,
       (SELECT EXTRACT(EPOCH FROM now() - min(analyzed)) FROM t) AS analyze_age,
       (SELECT name FROM t WHERE analyzed IS NOT NULL ORDER BY analyzed, name LIMIT 1)
         AS analyze_table,
       (SELECT count(*) FROM t WHERE analyzed IS NULL) AS analyze_never
