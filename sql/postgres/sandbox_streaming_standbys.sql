-- Sandbox status: how many standbys stream from this primary.
SELECT count(*) AS standbys FROM pg_stat_replication WHERE state = 'streaming';
