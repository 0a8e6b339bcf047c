-- Collector postgres_database: the connection limits, when the connections statement
-- returned no row to carry them (it always has one in practice: dbgauge's own).
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int AS reserved_connections
