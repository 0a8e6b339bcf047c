-- Collector postgres_server: per database its size and transaction ID ages, PostgreSQL 13+.
-- Sizes only for databases the role may measure (CONNECT, which PUBLIC has by default on
-- template0 too, or pg_read_all_stats, which pg_monitor has): pg_database_size needs no
-- connection to the database. It is NULL for a database dropped meanwhile. xid/mxid ages
-- for every database: template0 wraps too. connection_limit is datconnlimit (-1: none).
SELECT d.datname,
       CASE WHEN has_database_privilege(d.oid, 'CONNECT')
                 OR pg_has_role('pg_read_all_stats', 'MEMBER')
            THEN pg_database_size(d.oid) END AS size_bytes,
       age(d.datfrozenxid) AS xid_age,
       mxid_age(d.datminmxid) AS mxid_age,
       d.datconnlimit AS connection_limit,
       d.datallowconn AS allow_connections
FROM pg_database d
ORDER BY d.datname
