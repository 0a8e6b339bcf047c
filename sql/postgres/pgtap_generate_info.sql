-- pgtap generate: where the snapshot comes from (header of the generated file). PostgreSQL 13+.
SELECT current_database() AS database,
       current_setting('server_version') AS server_version,
       current_setting('search_path') AS search_path;
