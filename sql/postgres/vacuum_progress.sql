-- Collector postgres_vacuum_progress: every running VACUUM (autovacuum's and manual ones),
-- PostgreSQL 13-16 (pg_stat_progress_vacuum). The table's name is known only in the
-- connected database (regclass resolves there); elsewhere it is the relation's oid, as
-- postgres_exporter labels it. dead_tuples and max_dead_tuples are tuple counts here.
-- Another role's vacuum (autovacuum's: a superuser's) shows a role without
-- pg_read_all_stats only its pid and database: relid and phase NULL. Counted as hidden.
SELECT COALESCE(p.datname, '') AS datname, current_user AS role,
       COALESCE(CASE WHEN p.datname = current_database() THEN p.relid::regclass::text END,
                p.relid::text) AS relname,
       p.phase, p.heap_blks_total, p.heap_blks_scanned, p.heap_blks_vacuumed,
       p.index_vacuum_count, p.max_dead_tuples, p.num_dead_tuples AS dead_tuples
FROM pg_stat_progress_vacuum p
ORDER BY p.datname, relname, p.pid
