-- dbgauge checksum (checks/drift/discover.py), MySQL 8.0/8.4 and MariaDB 10.6+: the
-- server's id, to tell a discovered replica from the source itself.
SELECT @@server_id AS server_id
