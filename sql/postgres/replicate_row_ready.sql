-- dbgauge check replicate-row: whether dbgauge's schema and heartbeat table exist yet
-- (CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when it exists).
SELECT to_regnamespace('dbgauge') IS NOT NULL AS has_schema,
       to_regclass('dbgauge.heartbeat') IS NOT NULL AS has_table
