-- dbgauge check settings-checksum (checks/health/settings_checksum.py), PostgreSQL 13+:
-- every setting this role can see and its value, in name order, as check_postgres'
-- settings_checksum reads them -- but a setting the session itself set (source
-- 'client' or 'session': application_name, dbgauge's own timeouts) reads
-- '(session)', so every session of the role gets one checksum whatever its client set.
-- Superusers see more settings than other roles.
SELECT name,
       CASE WHEN source IN ('client', 'session') THEN '(session)' ELSE setting END AS setting
FROM pg_settings
ORDER BY name
