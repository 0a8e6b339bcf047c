-- Sandbox setup: the all-privileges test account (sandbox_admin).
GRANT ALL PRIVILEGES ON *.* TO %s@'%%' WITH GRANT OPTION;
