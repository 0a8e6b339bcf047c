-- Collector postgres_database: the connection limit, minus reserved superuser slots.
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int AS reserved_connections
