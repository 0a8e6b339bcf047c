-- Write guard (toolkit/write_guard.py), PostgreSQL 13+: does the server refuse writes?
-- Run by every dbgauge writer before it writes: a standby (in recovery) refuses every
-- write; default_transaction_read_only is this session's value (server, database or role).
SELECT pg_catalog.pg_is_in_recovery() AS in_recovery,
       pg_catalog.current_setting('default_transaction_read_only') AS default_transaction_read_only
