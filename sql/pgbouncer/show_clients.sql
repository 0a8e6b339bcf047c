-- Collector pgbouncer_clients: one row per client connection (PgBouncer 1.18+: type, user,
-- database, state, addr, port, ..., application_name). Only database, user, state and
-- application_name are read, by column name; a version without application_name counts
-- its clients under "".
SHOW CLIENTS
