-- Collector postgres_buffercache, PostgreSQL 16+ with pg_buffercache 1.4+: the shared
-- buffers summed by pg_buffercache_summary() (no buffer locks taken), postgres_exporter's
-- buffercache_summary query (collector/pg_buffercache_summary.go). {schema} is the
-- extension's schema, quoted by quote_ident.
SELECT buffers_used, buffers_unused, buffers_dirty, buffers_pinned,
       usagecount_avg::float8 AS usagecount_avg, true AS summary
FROM {schema}.pg_buffercache_summary()
