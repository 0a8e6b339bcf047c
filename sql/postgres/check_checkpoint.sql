-- dbgauge check checkpoint (checks/health/checkpoint.py), PostgreSQL 13+: seconds since
-- the last checkpoint (restartpoint on a standby) as pg_control records it -- what
-- check_postgres' checkpoint reads from pg_controldata on the server's own disk, here
-- over the connection. pg_control_checkpoint() needs EXECUTE (superuser by default:
-- GRANT EXECUTE ON FUNCTION pg_control_checkpoint() TO the monitoring role).
SELECT EXTRACT(EPOCH FROM now() - checkpoint_time)::float8 AS age_seconds,
       pg_is_in_recovery() AS in_recovery
FROM pg_control_checkpoint()
