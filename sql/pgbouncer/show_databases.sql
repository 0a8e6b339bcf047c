-- Collector pgbouncer_databases: one row per [databases] entry. PgBouncer 1.23 added
-- server_lifetime; 1.24 renamed reserve_pool to reserve_pool_size (pgbouncer#1232) and
-- added load_balance_hosts; 1.25 added max_client_connections and
-- current_client_connections. The collector reads columns by name, old or new.
SHOW DATABASES
