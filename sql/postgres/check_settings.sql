-- dbgauge check settings-checksum (checks/health/settings_checksum.py), PostgreSQL 13+:
-- every setting this role can see and its value, in name order, as check_postgres'
-- settings_checksum reads them (its statement, ORDER BY name in the server's collation),
-- in the session check_postgres' psql has: dbgauge reads it in a session that sets no
-- timeout of its own; check_postgres' psql is named `psql` (application_name) and sets
-- statement_timeout to its --timeout, 30 s by default, before the statement. Superusers
-- see more settings than other roles.
SELECT name,
       CASE WHEN name = 'application_name' AND source = 'client' THEN 'psql'
            WHEN name = 'statement_timeout' THEN '30000'
            ELSE setting END AS setting
FROM pg_settings
ORDER BY name
