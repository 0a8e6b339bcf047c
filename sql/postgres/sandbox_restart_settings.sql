-- Sandbox: settings pg-primary only takes at start (wal_level for pg-subscriber,
-- archive_mode for the archiver tests), to restart it once when they differ.
SELECT name, setting FROM pg_settings WHERE name = ANY(%s)
