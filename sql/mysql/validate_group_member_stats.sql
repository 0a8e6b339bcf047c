-- validate innodb-cluster --live (issue 8): certifier and applier queues per member, to
-- compare with the flow-control thresholds.
SELECT MEMBER_ID AS member_id,
       COUNT_TRANSACTIONS_IN_QUEUE AS count_transactions_in_queue,
       COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE AS count_transactions_remote_in_applier_queue,
       COUNT_CONFLICTS_DETECTED AS count_conflicts_detected
  FROM performance_schema.replication_group_member_stats
