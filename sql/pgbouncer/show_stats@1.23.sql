-- Collector pgbouncer_stats, PgBouncer 1.23+: SHOW STATS keeps growing (server assignments
-- in 1.23, prepared-statement parse/bind counts in 1.24, each with an avg_ twin) while only
-- totals are exported, so read SHOW STATS_TOTALS: the same counters without the total_
-- prefix (xact_count, query_count, bytes_received, bytes_sent, xact_time, query_time,
-- wait_time, server_assignment_count, client_parse_count, ...), and PgBouncer skips
-- computing averages. Sources: pgbouncer src/stats.c admin_database_stats_totals();
-- pgsty/pg_exporter#60 (1.23 columns); prometheus-community/pgbouncer_exporter#194.
SHOW STATS_TOTALS
