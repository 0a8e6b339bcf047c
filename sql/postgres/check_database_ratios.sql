-- dbgauge check hitratio / commitratio (checks/health/ratios.py), PostgreSQL 13+: each
-- database's buffer hit ratio and commit ratio in percent since the statistics were
-- reset, as check_postgres computes them (rounded to 2 decimals; NULL for a database
-- with no block read or no transaction yet: not judged).
-- owner: the database's or relation's owner, which --includeuser/--excludeuser match
-- (check_postgres' $USERWHERECLAUSE on datdba / relowner).
SELECT d.datname, pg_get_userbyid(d.datdba) AS owner,
       round(100.0 * s.blks_hit / NULLIF(s.blks_read + s.blks_hit, 0), 2)::float8
         AS hit_percent,
       round(100.0 * s.xact_commit / NULLIF(s.xact_commit + s.xact_rollback, 0), 2)::float8
         AS commit_percent
FROM pg_stat_database s
JOIN pg_database d ON d.oid = s.datid
ORDER BY d.datname
