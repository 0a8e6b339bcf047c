-- pgtap run: pre-flight through psql (connectivity, server and pgTAP versions). PostgreSQL 13+.
-- Output (unaligned, tuples only): server_version|pgtap_version
SELECT current_setting('server_version')
       || '|' || coalesce((SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'pgtap'), '');
