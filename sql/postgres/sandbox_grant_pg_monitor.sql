-- Sandbox setup: the monitoring role reads the pg_stat_* views of every session.
GRANT pg_monitor TO {role};
