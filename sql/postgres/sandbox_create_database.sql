-- Sandbox setup: a database owned by the admin account.
CREATE DATABASE {database} OWNER {owner};
