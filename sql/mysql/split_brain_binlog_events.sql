-- Check split-brain, MySQL 8.0/8.4 and MariaDB 10.6+: one page of a binlog file's events
-- (file, start position, page size bound as parameters), read from each file's header
-- (Previous_gtids / Gtid_list) to the first errant GTID event and its transaction. Needs
-- REPLICATION SLAVE (MySQL) or BINLOG MONITOR (MariaDB); without it the event details are
-- left out.
SHOW BINLOG EVENTS IN %s FROM %s LIMIT %s
