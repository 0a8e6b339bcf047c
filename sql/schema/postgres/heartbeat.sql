-- dbgauge.heartbeat: pt-heartbeat-like lag measurement for PostgreSQL. PostgreSQL 13+.
-- One row per writing node, upserted every interval by the heartbeat writer; a reader on a
-- replica computes lag = now() - ts of its source's row (clock skew applies, as with
-- pt-heartbeat). system_identifier (pg_control_system()) names the cluster, node_name the
-- writer (its dbgauge target name): physical standbys share the system identifier, so two
-- rows with the same identifier written at the same time are two writable nodes.
-- Idempotent: safe to run on every start; changes nothing that already exists.
CREATE SCHEMA IF NOT EXISTS dbgauge;

CREATE TABLE IF NOT EXISTS dbgauge.heartbeat (
    system_identifier bigint      NOT NULL,
    node_name         text        NOT NULL,
    ts                timestamptz NOT NULL DEFAULT clock_timestamp(),
    timeline_id       integer,
    wal_lsn           pg_lsn,
    CONSTRAINT heartbeat_pkey PRIMARY KEY (system_identifier, node_name),
    CONSTRAINT heartbeat_node_name_check CHECK (node_name <> ''),
    CONSTRAINT heartbeat_timeline_id_check CHECK (timeline_id > 0)
);

COMMENT ON TABLE dbgauge.heartbeat IS
    'dbgauge heartbeat: one row per writing node; lag = now() - ts of the source row';
COMMENT ON COLUMN dbgauge.heartbeat.system_identifier IS
    'pg_control_system().system_identifier of the writer (shared by physical standbys)';
COMMENT ON COLUMN dbgauge.heartbeat.node_name IS 'the writer''s dbgauge target name';
COMMENT ON COLUMN dbgauge.heartbeat.ts IS 'when the writer last wrote the row';
COMMENT ON COLUMN dbgauge.heartbeat.timeline_id IS 'the writer''s timeline when it wrote';
COMMENT ON COLUMN dbgauge.heartbeat.wal_lsn IS 'pg_current_wal_lsn() when the writer wrote';
