-- Collector pgbouncer_lists: PgBouncer's internal list sizes (admin console).
SHOW LISTS
