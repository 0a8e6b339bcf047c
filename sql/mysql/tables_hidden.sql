-- Collector mysql_tables, MySQL 8.0/8.4: the InnoDB tables outside the system schemas
-- (INNODB_TABLES lists every one to an account with PROCESS, whatever its table
-- privileges) and how many of them information_schema.TABLES shows this account (only
-- those it holds a privilege on): the difference is missing from the sizes. A partitioned
-- table counts once ('#p#', '#sp#'); FULLTEXT auxiliary tables (fts_<16 hex>_...) and
-- intermediate '#sql' tables not at all. Needs PROCESS.
SELECT (SELECT COUNT(DISTINCT SUBSTRING_INDEX(LOWER(NAME), '#p#', 1))
          FROM information_schema.INNODB_TABLES
         WHERE NAME LIKE '%/%'
           AND SUBSTRING_INDEX(NAME, '/', 1) NOT IN ('mysql', 'sys', 'performance_schema')
           AND NAME NOT LIKE '%/#sql%'
           AND LOWER(NAME) NOT REGEXP '/fts_[0-9a-f]{16}_') AS innodb_tables,
       (SELECT COUNT(*)
          FROM information_schema.TABLES
         WHERE ENGINE = 'InnoDB' AND TABLE_TYPE = 'BASE TABLE'
           AND TABLE_SCHEMA NOT IN ('mysql', 'sys', 'performance_schema',
                                    'information_schema')) AS visible_tables
