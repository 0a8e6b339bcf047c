-- Collector postgres_activity: the autovacuum workers at work now (pg_stat_activity rows
-- whose query starts 'autovacuum:', as postgres_exporter's stat_activity_autovacuum
-- collector selects them, collector/pg_stat_activity_autovacuum.go), with its relname
-- (SPLIT_PART(query, '.', 2): the table without its schema, " (to prevent wraparound)"
-- kept), the transaction's start in Unix seconds and its age.
SELECT datname, query, SPLIT_PART(query, '.', 2) AS relname,
       EXTRACT(EPOCH FROM xact_start)::float8 AS started_seconds,
       EXTRACT(EPOCH FROM clock_timestamp() - xact_start)::float8 AS age_seconds
FROM pg_catalog.pg_stat_activity
WHERE query LIKE 'autovacuum:%'
ORDER BY pid
