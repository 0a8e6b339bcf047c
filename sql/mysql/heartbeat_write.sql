-- Heartbeat writer (toolkit/heartbeat.py), MySQL 8.0/8.4 and MariaDB 10.6+: this server's
-- row, keyed by @@server_id like pt-heartbeat's, with the writer's UTC timestamp (%s).
-- REPLACE keeps it one statement whether or not the row exists yet; it is binlogged and
-- replicates, which is the point. {table} is filled in by quote_table().
REPLACE INTO {table} (ts, server_id) VALUES (%s, @@GLOBAL.server_id)
