-- Collector mysql_user_statistics: whether the server gathers user statistics at all.
SELECT @@GLOBAL.userstat AS userstat
