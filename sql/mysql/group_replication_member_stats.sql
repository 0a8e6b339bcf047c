-- Collector mysql_group_replication, MySQL 8.0/8.4: certification and applier queues and
-- conflicts per member (every member's row is visible from any member).
SELECT MEMBER_ID AS member_id,
       COUNT_TRANSACTIONS_IN_QUEUE AS certifier_queue,
       COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE AS applier_queue,
       COUNT_CONFLICTS_DETECTED AS conflicts_detected
  FROM performance_schema.replication_group_member_stats
