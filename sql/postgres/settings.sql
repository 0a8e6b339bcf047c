-- Collector postgres_settings, PostgreSQL 13+: the allow-listed settings (a bound array of
-- names); enum and string settings are not numbers and are left out, and so are values
-- set by dbgauge's own connection options (source client): they are not the server's.
-- `setting` is in `unit` (8kB pages, kB, ms...): the collector converts to base units.
SELECT name, setting, vartype, unit
FROM pg_settings
WHERE name = ANY(%s) AND vartype IN ('bool', 'integer', 'real') AND source <> 'client'
ORDER BY name
