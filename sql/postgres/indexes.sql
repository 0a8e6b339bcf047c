-- Collector postgres_indexes, PostgreSQL 13+: the connected database's user indexes with
-- the most block reads and buffer hits first (pg_statio_user_indexes, as postgres_exporter's
-- statio_user_indexes collector reads it, collector/pg_statio_user_indexes.go), with the
-- scans of pg_stat_user_indexes; `indexes` (on every row) counts them all, before the
-- limit.
SELECT current_database() AS datname, s.schemaname, s.relname, s.indexrelname,
       s.idx_blks_read, s.idx_blks_hit, u.idx_scan, u.idx_tup_read, u.idx_tup_fetch,
       count(*) OVER () AS indexes
FROM pg_catalog.pg_statio_user_indexes s
LEFT JOIN pg_catalog.pg_stat_user_indexes u ON u.indexrelid = s.indexrelid
ORDER BY s.idx_blks_read + s.idx_blks_hit DESC NULLS LAST, s.indexrelid
LIMIT %s
