-- Collector postgres_tables, PostgreSQL 13-15: every column of pg_stat_user_tables and
-- pg_statio_user_tables for the connected database's user tables with the most dead
-- tuples, then the largest (pg_table_size: heap, TOAST, free space and visibility maps;
-- pg_indexes_size: its indexes; together pg_total_relation_size).
-- `tables` (on every row) counts them all, before the limit. NULLs are kept: idx_* for a
-- table without indexes, toast_*/tidx_* without TOAST, last_* when never done (as Unix
-- seconds; `now` is the statement's start, for ages). 16 and 18 add columns (@16, @18).
-- Sizes cost one table, not the statement: pg_table_size and pg_indexes_size take an
-- ACCESS SHARE lock on the table, its TOAST table and their indexes, and would wait (until
-- lock_timeout, failing everything) behind an ACCESS EXCLUSIVE lock another session holds
-- or waits for on any of them (ALTER TABLE, TRUNCATE, VACUUM FULL, REINDEX, DROP or LOCK in
-- an open transaction). Such a table is not sized (NULL) and counted in `unsized`; a lock
-- taken after pg_locks was read can still make the statement wait.
WITH locked AS MATERIALIZED (
  SELECT DISTINCT l.relation
  FROM pg_locks l
  WHERE l.locktype = 'relation' AND l.mode = 'AccessExclusiveLock'
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.pid IS DISTINCT FROM pg_backend_pid()
)
SELECT current_database() AS datname, t.schemaname, t.relname,
       t.seq_scan, t.seq_tup_read, t.idx_scan, t.idx_tup_fetch,
       t.n_tup_ins, t.n_tup_upd, t.n_tup_del, t.n_tup_hot_upd,
       t.n_live_tup, t.n_dead_tup, t.n_mod_since_analyze, t.n_ins_since_vacuum,
       EXTRACT(EPOCH FROM t.last_vacuum) AS last_vacuum,
       EXTRACT(EPOCH FROM t.last_autovacuum) AS last_autovacuum,
       EXTRACT(EPOCH FROM t.last_analyze) AS last_analyze,
       EXTRACT(EPOCH FROM t.last_autoanalyze) AS last_autoanalyze,
       t.vacuum_count, t.autovacuum_count, t.analyze_count, t.autoanalyze_count,
       s.heap_blks_read, s.heap_blks_hit, s.idx_blks_read, s.idx_blks_hit,
       s.toast_blks_read, s.toast_blks_hit, s.tidx_blks_read, s.tidx_blks_hit,
       z.table_bytes, z.indexes_bytes,
       EXTRACT(EPOCH FROM now()) AS now, count(*) OVER () AS tables,
       count(*) FILTER (WHERE g.locked) OVER () AS unsized
FROM pg_stat_user_tables t
LEFT JOIN pg_statio_user_tables s ON s.relid = t.relid
JOIN pg_class c ON c.oid = t.relid
CROSS JOIN LATERAL (SELECT EXISTS (
    SELECT FROM locked k
    WHERE k.relation IN (t.relid, c.reltoastrelid)
       OR k.relation IN (SELECT i.indexrelid FROM pg_index i
                         WHERE i.indrelid IN (t.relid, c.reltoastrelid))) AS locked) g
CROSS JOIN LATERAL (SELECT CASE WHEN NOT g.locked THEN pg_table_size(t.relid) END
                             AS table_bytes,
                           CASE WHEN NOT g.locked THEN pg_indexes_size(t.relid) END
                             AS indexes_bytes) z
ORDER BY t.n_dead_tup DESC NULLS LAST, z.table_bytes + z.indexes_bytes DESC NULLS LAST, t.relid
LIMIT %s
