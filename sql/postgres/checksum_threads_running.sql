-- dbgauge checksum (checks/drift/), PostgreSQL 13+, on the source: client backends running
-- a statement now (the Threads_running of the pause rule). pg_monitor sees every backend.
SELECT count(*) AS running FROM pg_stat_activity
WHERE state = 'active' AND backend_type = 'client backend'
