-- Collectors mysql_statements and mysql_tables: is performance_schema on? (OFF leaves its
-- tables empty; the collectors then say so instead of reporting nothing.)
SELECT @@GLOBAL.performance_schema AS enabled
