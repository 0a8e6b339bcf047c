-- dbgauge check cluster-id (checks/health/cluster_id.py), PostgreSQL 13+: the database
-- system identifier pg_controldata prints, over the connection (pg_control_system() is
-- granted to pg_monitor).
SELECT system_identifier::text AS system_identifier FROM pg_control_system()
