-- pgtap run --install-pgtap: is pgTAP created in this database, and does the server have it?
-- PostgreSQL 13+.
SELECT (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'pgtap') AS installed_version,
       (SELECT default_version FROM pg_catalog.pg_available_extensions WHERE name = 'pgtap')
           AS default_version;
