-- Collector pgbouncer_stats, PgBouncer 1.18-1.22: per-database totals (total_* columns)
-- and averages; only the totals are used. Times are microseconds.
SHOW STATS
