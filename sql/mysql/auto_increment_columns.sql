-- Collector mysql_auto_increment, MySQL 8.0/8.4 and MariaDB 10.6+: each AUTO_INCREMENT
-- column's next value and its integer type's maximum (2^bits - 1 unsigned, 2^(bits-1) - 1
-- signed), the nearest their maximum first. Reads information_schema.COLUMNS, slow with many
-- tables (it runs under the target's query_timeout). Parameter: the limit plus one.
SELECT table_schema, table_name, column_name, auto_increment, max_value
  FROM (SELECT t.TABLE_SCHEMA AS table_schema, t.TABLE_NAME AS table_name,
               c.COLUMN_NAME AS column_name, t.AUTO_INCREMENT AS auto_increment,
               POW(2, CASE c.DATA_TYPE WHEN 'tinyint' THEN 7 WHEN 'smallint' THEN 15
                                       WHEN 'mediumint' THEN 23 WHEN 'int' THEN 31
                                       WHEN 'bigint' THEN 63 END
                      + (c.COLUMN_TYPE LIKE '%% unsigned')) - 1 AS max_value
          FROM information_schema.TABLES t
          JOIN information_schema.COLUMNS c
            ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
         WHERE c.EXTRA LIKE '%%auto_increment%%' AND t.AUTO_INCREMENT IS NOT NULL) a
 ORDER BY auto_increment / max_value DESC, table_schema, table_name
 LIMIT %s
