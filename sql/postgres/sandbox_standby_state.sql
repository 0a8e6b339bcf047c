-- Sandbox: the walsender state of one standby, by its application_name.
SELECT state FROM pg_stat_replication WHERE application_name = %s;
