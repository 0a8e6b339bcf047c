-- Collector postgres_buffercache, PostgreSQL 13-15 (and 16+ with pg_buffercache older than
-- 1.4): the shared buffers summed from the pg_buffercache view, one row per buffer, as
-- pg_buffercache_summary() sums them from 16 on (used: holding a relation's page;
-- usagecount_avg over the used ones). summary false: postgres_exporter's
-- buffercache_summary collector reports nothing here. {schema} is the extension's schema,
-- quoted by quote_ident.
SELECT count(*) FILTER (WHERE relfilenode IS NOT NULL) AS buffers_used,
       count(*) FILTER (WHERE relfilenode IS NULL) AS buffers_unused,
       count(*) FILTER (WHERE isdirty) AS buffers_dirty,
       count(*) FILTER (WHERE pinning_backends > 0) AS buffers_pinned,
       (avg(usagecount) FILTER (WHERE relfilenode IS NOT NULL))::float8 AS usagecount_avg,
       false AS summary
FROM {schema}.pg_buffercache
