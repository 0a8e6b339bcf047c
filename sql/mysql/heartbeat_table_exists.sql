-- Heartbeat writer (toolkit/heartbeat.py), MySQL 8.0/8.4 and MariaDB 10.6+: does the
-- table exist? Checked first so a writer without CREATE privilege can use a table a DBA made.
SELECT COUNT(*) AS found FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s
