-- Collector mysql_status: the connection limit, to compare Threads_connected with.
SELECT @@GLOBAL.max_connections AS max_connections
