-- Sandbox setup, in `app` on pg-primary: dbgauge's own schema, owned by dbgauge.
CREATE SCHEMA IF NOT EXISTS {schema} AUTHORIZATION {owner};
