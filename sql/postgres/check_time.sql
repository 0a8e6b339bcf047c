-- dbgauge check time-sync (checks/health/time_sync.py): the server's clock, in epoch
-- seconds with microseconds (clock_timestamp(): now, not the transaction's start).
SELECT extract(epoch FROM clock_timestamp())::float8 AS epoch
