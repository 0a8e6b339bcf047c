-- Collector postgres_server: server-wide values, PostgreSQL 13+ (one row).
SELECT EXTRACT(EPOCH FROM pg_postmaster_start_time()) AS start_time,
       current_setting('autovacuum_freeze_max_age')::bigint AS autovacuum_freeze_max_age,
       current_setting('autovacuum_multixact_freeze_max_age')::bigint
         AS autovacuum_multixact_freeze_max_age
