-- Sandbox setup: drop one (anonymous) account; user and host bound as values.
DROP USER %s@%s;
