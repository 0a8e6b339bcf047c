-- Collector postgres_tables, PostgreSQL 13+: the connected database's user tables with the
-- most dead tuples, then the largest (pg_total_relation_size: heap, indexes and TOAST).
-- `tables` (on every row) counts them all, before the limit.
-- idx_scan is NULL for a table without indexes; last_* ages are NULL when never done (the
-- collector clamps them at 0: now() is the statement's start, a hair before a fresh event).
SELECT t.schemaname, t.relname, t.n_live_tup, t.n_dead_tup, t.seq_scan, t.idx_scan,
       pg_total_relation_size(t.relid) AS size_bytes,
       EXTRACT(EPOCH FROM now() - t.last_vacuum) AS last_vacuum_age,
       EXTRACT(EPOCH FROM now() - t.last_autovacuum) AS last_autovacuum_age,
       EXTRACT(EPOCH FROM now() - t.last_analyze) AS last_analyze_age,
       EXTRACT(EPOCH FROM now() - t.last_autoanalyze) AS last_autoanalyze_age,
       count(*) OVER () AS tables
FROM pg_stat_user_tables t
ORDER BY t.n_dead_tup DESC NULLS LAST, pg_total_relation_size(t.relid) DESC, t.relid
LIMIT %s
