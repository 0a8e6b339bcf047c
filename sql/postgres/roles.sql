-- Collector postgres_server: each role's connection limit (rolconnlimit, -1 for none),
-- PostgreSQL 13+.
SELECT rolname, rolconnlimit AS connection_limit
FROM pg_roles
ORDER BY rolname
