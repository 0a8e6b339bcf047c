-- dbgauge check lock-count (checks/health/lock_count.py), PostgreSQL 13+: the locks of
-- every database that takes connections, by mode and granted or awaited, as
-- check_postgres' locks counts them (`pg_locks RIGHT JOIN pg_database ... WHERE
-- d.datallowconn`): locks without a database (transaction IDs, virtual xids, shared
-- catalogs) are not counted; every database has a row (mode NULL, 0 locks when it holds
-- none). This statement's own AccessShareLock on pg_locks is counted, as check_postgres'
-- is. pg_locks shows every session's locks to every role.
SELECT d.datname, l.mode, count(l.mode) AS locks,
       count(l.mode) FILTER (WHERE NOT l.granted) AS waiting
FROM pg_database d
LEFT JOIN pg_locks l ON l.database = d.oid
WHERE d.datallowconn
GROUP BY d.datname, l.mode
ORDER BY d.datname, l.mode
