-- dbgauge check autovac-freeze (checks/health/autovac_freeze.py), PostgreSQL 13+: each
-- database's transaction-ID age against autovacuum_freeze_max_age, the age at which an
-- anti-wraparound autovacuum is forced (check_postgres' autovac_freeze: databases that
-- allow connections).
SELECT d.datname, age(d.datfrozenxid)::float8 AS xid_age,
       current_setting('autovacuum_freeze_max_age')::float8 AS freeze_max_age
FROM pg_database d
WHERE d.datallowconn
ORDER BY d.datname
