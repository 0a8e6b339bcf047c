-- Collector postgres_sequences, PostgreSQL 13+: the connected database's sequences nearest
-- to their end. used_ratio is how far last_value went from the start end towards the far
-- end (min_value -> max_value ascending, max_value -> min_value descending), computed in
-- numeric (max_value - min_value overflows bigint). last_value is NULL until the sequence
-- is first used, and also when this role lacks USAGE or SELECT on it: those are counted in
-- unreadable. Cycling sequences never run out and are left out of the ranking.
SELECT s.schemaname, s.sequencename,
       CASE WHEN s.increment_by > 0
            THEN (s.last_value::numeric - s.min_value) / NULLIF(s.max_value::numeric - s.min_value, 0)
            ELSE (s.max_value::numeric - s.last_value) / NULLIF(s.max_value::numeric - s.min_value, 0)
       END AS used_ratio,
       count(*) OVER () AS sequences,
       count(*) FILTER (WHERE NOT has_sequence_privilege(
           format('%%I.%%I', s.schemaname, s.sequencename), 'SELECT,USAGE')) OVER ()
         AS unreadable
FROM pg_sequences s
WHERE NOT s.cycle
ORDER BY used_ratio DESC NULLS LAST, s.schemaname, s.sequencename
LIMIT %s
