-- validate innodb-cluster --live (issue 8): the group's view of its members (MySQL 8.0+).
SELECT MEMBER_ID AS member_id, MEMBER_HOST AS member_host, MEMBER_PORT AS member_port,
       MEMBER_STATE AS member_state, MEMBER_ROLE AS member_role,
       MEMBER_VERSION AS member_version
  FROM performance_schema.replication_group_members
