-- Sandbox status: how many physical standbys stream from this primary, and how many
-- logical walsenders (a subscription's: its slot is logical) stream beside them.
SELECT count(*) FILTER (WHERE s.slot_type IS DISTINCT FROM 'logical') AS standbys,
       count(*) FILTER (WHERE s.slot_type = 'logical') AS logical
  FROM pg_stat_replication r
  LEFT JOIN pg_replication_slots s ON s.active_pid = r.pid
 WHERE r.state = 'streaming'
