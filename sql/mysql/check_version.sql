-- dbgauge check version (checks/health/version.py): the server's version as it says it
-- (MySQL and MariaDB: 10.11.19-MariaDB-0+deb12u1-log, 8.0.36).
SELECT VERSION() AS server_version
