-- dbgauge check database-size (checks/health/database_size.py), PostgreSQL 13+: every
-- database's size, as check_postgres' database_size reads it. pg_database_size() needs
-- CONNECT on the database or pg_read_all_stats (in pg_monitor): a database the role may
-- not size has a NULL size (counted, not judged), never an error that costs the others.
-- owner: the database's or relation's owner, which --includeuser/--excludeuser match
-- (check_postgres' $USERWHERECLAUSE on datdba / relowner).
SELECT d.datname, pg_get_userbyid(d.datdba) AS owner,
       CASE WHEN has_database_privilege(d.oid, 'CONNECT')
                 OR pg_has_role('pg_read_all_stats', 'USAGE')
            THEN pg_database_size(d.oid) END AS size_bytes
FROM pg_database d
ORDER BY d.datname
