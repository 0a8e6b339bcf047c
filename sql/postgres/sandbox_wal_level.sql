-- Sandbox: pg-subscriber needs wal_level=logical on pg-primary.
SHOW wal_level;
