-- Collector pgbouncer_pools: one row per (database, user) pool. PgBouncer 1.18+ columns:
-- cl_active, cl_waiting, cl_active_cancel_req, cl_waiting_cancel_req, sv_active,
-- sv_active_cancel, sv_being_canceled, sv_idle, sv_used, sv_tested, sv_login, maxwait,
-- maxwait_us, pool_mode; 1.24 adds load_balance_hosts. Read by column name.
SHOW POOLS
