-- Collector mysql_group_replication, MySQL 8.0/8.4: the group's view of its members (empty
-- when Group Replication is not running). MEMBER_ROLE exists from 8.0.2.
SELECT MEMBER_ID AS member_id, MEMBER_HOST AS member_host, MEMBER_PORT AS member_port,
       MEMBER_STATE AS member_state, MEMBER_ROLE AS member_role
  FROM performance_schema.replication_group_members
