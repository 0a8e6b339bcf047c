-- dbgauge check disabled-triggers (checks/health/disabled_triggers.py), PostgreSQL 13+:
-- the connected database's triggers in state 'D' (ALTER TABLE ... DISABLE TRIGGER), as
-- check_postgres' disabled_triggers counts them ('R'eplica and 'A'lways are enabled).
SELECT t.tgrelid::regclass::text AS table_name, t.tgname
FROM pg_trigger t
WHERE t.tgenabled = 'D'
ORDER BY t.tgname, 1
