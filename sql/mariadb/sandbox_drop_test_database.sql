-- Sandbox setup: the install's `test` database is not wanted.
DROP DATABASE IF EXISTS test;
