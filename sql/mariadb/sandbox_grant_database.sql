-- Sandbox setup: all privileges on one database ({database}: quoted identifier).
GRANT ALL PRIVILEGES ON {database}.* TO %s@'%%';
