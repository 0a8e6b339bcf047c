-- Collector postgres_database, PostgreSQL 16+ (reserved_connections as role_reserved_connections):
-- the connection limits, when the connections statement returned no row to carry them.
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int AS reserved_connections,
       current_setting('reserved_connections')::int AS role_reserved_connections
