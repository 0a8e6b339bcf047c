-- dbgauge check uptime (checks/health/uptime.py), PostgreSQL 13+: seconds since the
-- postmaster started, on the server's own clock. No privilege needed.
SELECT EXTRACT(EPOCH FROM now() - pg_postmaster_start_time()) AS uptime_seconds
