-- Sandbox setup: one account, any host; name and password bound as values (%% is a
-- literal %, the host wildcard).
CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s;
