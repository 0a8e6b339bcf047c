-- Sandbox setup, in `drift` on pg-primary: every table of the database is published.
CREATE PUBLICATION {publication} FOR ALL TABLES;
