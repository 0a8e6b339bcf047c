-- Sandbox setup: the monitoring role may connect to the database.
GRANT CONNECT ON DATABASE {database} TO {role};
