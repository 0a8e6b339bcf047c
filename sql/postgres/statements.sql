-- Collector postgres_statements, PostgreSQL 13+ (total_exec_time; total_time before 13):
-- the top statements by total execution time. Rows are summed per (user, database,
-- queryid): PostgreSQL 14+ keeps top-level and nested executions apart (toplevel) when
-- pg_stat_statements.track = all. Times are milliseconds. Never the query text.
-- {schema} is the extension's schema from statements_extension, quoted by quote_ident.
SELECT s.queryid::text AS queryid, d.datname AS database, r.rolname AS username,
       sum(s.calls) AS calls, sum(s.total_exec_time) AS total_exec_time,
       sum(s.rows) AS rows, sum(s.shared_blks_hit) AS shared_blks_hit,
       sum(s.shared_blks_read) AS shared_blks_read
FROM {schema}.pg_stat_statements AS s
JOIN pg_database d ON d.oid = s.dbid
JOIN pg_roles r ON r.oid = s.userid
WHERE s.queryid IS NOT NULL
GROUP BY s.queryid, d.datname, r.rolname
ORDER BY sum(s.total_exec_time) DESC, s.queryid
LIMIT %s
