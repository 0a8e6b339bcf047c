-- dbgauge check replicate-row: which cluster a node belongs to (its standbys share the
-- primary's system identifier) and whether it is a standby.
SELECT pg_is_in_recovery() AS standby,
       (SELECT system_identifier FROM pg_control_system())::text AS system_identifier
