-- Collector postgres_server: server-wide values, PostgreSQL 13+ (one row): start time, the
-- autovacuum freeze limits, and the version as version() spells it and as server_version
-- does (postgres_exporter's pg_static labels).
SELECT EXTRACT(EPOCH FROM pg_postmaster_start_time()) AS start_time,
       current_setting('autovacuum_freeze_max_age')::bigint AS autovacuum_freeze_max_age,
       current_setting('autovacuum_multixact_freeze_max_age')::bigint
         AS autovacuum_multixact_freeze_max_age,
       version() AS version,
       current_setting('server_version') AS server_version
