-- Collector postgres_vacuum_progress: every running VACUUM (autovacuum's and manual ones),
-- PostgreSQL 17+ (pg_stat_progress_vacuum measures dead tuples in bytes of TID store now:
-- max_dead_tuple_bytes, dead_tuple_bytes; num_dead_item_ids counts them). The table's name
-- is known only in the connected database (regclass resolves there); elsewhere it is the
-- relation's oid, as postgres_exporter labels it.
-- Another role's vacuum (autovacuum's: a superuser's) shows a role without
-- pg_read_all_stats only its pid and database: relid and phase NULL. Counted as hidden.
SELECT COALESCE(p.datname, '') AS datname, current_user AS role,
       COALESCE(CASE WHEN p.datname = current_database() THEN p.relid::regclass::text END,
                p.relid::text) AS relname,
       p.phase, p.heap_blks_total, p.heap_blks_scanned, p.heap_blks_vacuumed,
       p.index_vacuum_count, p.max_dead_tuple_bytes, p.dead_tuple_bytes,
       p.num_dead_item_ids AS dead_tuples
FROM pg_stat_progress_vacuum p
ORDER BY p.datname, relname, p.pid
