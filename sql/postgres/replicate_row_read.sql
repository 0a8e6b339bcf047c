-- dbgauge check replicate-row (checks/health/replicate_row.py), on a standby: the token of
-- replicate-row's heartbeat row as replayed here (NULL: the table or the row not yet here).
SELECT (SELECT (extract(epoch FROM ts) * 1000000)::bigint FROM dbgauge.heartbeat
        WHERE node_name = 'dbgauge replicate-row'
          AND system_identifier = (SELECT system_identifier FROM pg_control_system()))
       AS token
