-- Collector postgres_sequences, PostgreSQL 13+: the connected database's sequences nearest
-- to their end. used_ratio is how far last_value went from the start end towards the far
-- end (min_value -> max_value ascending, max_value -> min_value descending), computed in
-- numeric (max_value - min_value overflows bigint). last_value is NULL until the sequence
-- is first used. Cycling sequences never run out and are left out of the ranking.
-- One sequence costs only itself: it is read by OID (a name would need USAGE on its
-- schema to resolve), only with SELECT or USAGE on it (else it is counted in unreadable),
-- and not while another session holds or waits for a lock that reading it would queue
-- behind (ALTER SEQUENCE, DROP, LOCK in an open transaction: counted in locked) -- one
-- such sequence would otherwise hold the statement until lock_timeout. An unlogged
-- sequence has no value on a standby. The catalogs are read, not the pg_sequences view:
-- the view reads every sequence's last_value, and so waits on every such lock.
WITH locked AS MATERIALIZED (
  SELECT DISTINCT l.relation
  FROM pg_locks l
  WHERE l.locktype = 'relation'
    AND l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.pid IS DISTINCT FROM pg_backend_pid()
)
SELECT n.nspname AS schemaname, c.relname AS sequencename,
       CASE WHEN s.seqincrement > 0
            THEN (v.last_value::numeric - s.seqmin) / NULLIF(s.seqmax::numeric - s.seqmin, 0)
            ELSE (s.seqmax::numeric - v.last_value) / NULLIF(s.seqmax::numeric - s.seqmin, 0)
       END AS used_ratio,
       count(*) OVER () AS sequences,
       count(*) FILTER (WHERE NOT p.readable) OVER () AS unreadable,
       count(*) FILTER (WHERE p.readable AND p.locked) OVER () AS locked
FROM pg_sequence s
JOIN pg_class c ON c.oid = s.seqrelid AND c.relkind = 'S'
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (SELECT has_sequence_privilege(c.oid, 'SELECT,USAGE') AS readable,
                           c.oid IN (SELECT relation FROM locked) AS locked) p
CROSS JOIN LATERAL (SELECT CASE WHEN p.readable AND NOT p.locked
                                     AND NOT (c.relpersistence = 'u' AND pg_is_in_recovery())
                                THEN pg_sequence_last_value(c.oid) END AS last_value) v
WHERE NOT s.seqcycle AND NOT pg_is_other_temp_schema(n.oid)
ORDER BY used_ratio DESC NULLS LAST, n.nspname, c.relname
LIMIT %s
