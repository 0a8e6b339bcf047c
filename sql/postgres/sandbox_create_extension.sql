-- Sandbox setup, in `app` on pg-primary: pgtap and pg_stat_statements.
CREATE EXTENSION IF NOT EXISTS {extension};
