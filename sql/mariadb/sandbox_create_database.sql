-- Sandbox setup, on the primary (replicated): {database} is a quoted identifier.
CREATE DATABASE IF NOT EXISTS {database};
