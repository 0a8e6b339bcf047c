-- Collector postgres_settings, PostgreSQL 13+: every numeric setting (bool, integer, real;
-- enum and string settings are not numbers), as postgres_exporter reads them; the
-- collector keeps the allow-list only when its `settings` option says `curated`. Values set
-- by dbgauge's own connection options (source client: statement_timeout, lock_timeout,
-- idle_in_transaction_session_timeout) are left out: they are not the server's.
-- `setting` is in `unit` (8kB pages, kB, ms...): the collector converts to base units.
-- sync_commit_cancel_wait (a vendor setting postgres_exporter skips) is left out too.
SELECT name, setting, vartype, unit, short_desc
FROM pg_settings
WHERE vartype IN ('bool', 'integer', 'real') AND source <> 'client'
  AND name <> 'sync_commit_cancel_wait'
ORDER BY name
