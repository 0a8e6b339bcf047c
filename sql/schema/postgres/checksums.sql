-- dbgauge.checksums: chunk checksums for drift detection (pt-table-checksum's
-- percona.checksums, for PostgreSQL). PostgreSQL 13+.
-- A run writes one row per chunk of a table walked along an index: this_cnt/this_crc are
-- computed on the node holding the row, source_cnt/source_crc are the source's values for
-- the same chunk; a chunk differs when the counts or the crcs differ. tbl is the
-- schema-qualified table name; lower/upper_boundary are the chunk's index bounds as text.
-- Idempotent: safe to run on every start; changes nothing that already exists.
CREATE SCHEMA IF NOT EXISTS dbgauge;

CREATE TABLE IF NOT EXISTS dbgauge.checksums (
    db             text             NOT NULL,
    tbl            text             NOT NULL,
    chunk          integer          NOT NULL,
    chunk_time     double precision,
    chunk_index    text,
    lower_boundary text,
    upper_boundary text,
    this_crc       text             NOT NULL,
    this_cnt       bigint           NOT NULL,
    source_crc     text,
    source_cnt     bigint,
    ts             timestamptz      NOT NULL DEFAULT now(),
    CONSTRAINT checksums_pkey PRIMARY KEY (db, tbl, chunk),
    CONSTRAINT checksums_chunk_check CHECK (chunk >= 1),
    CONSTRAINT checksums_cnt_check CHECK (this_cnt >= 0 AND (source_cnt IS NULL OR source_cnt >= 0))
);

CREATE INDEX IF NOT EXISTS checksums_ts_db_tbl ON dbgauge.checksums (ts, db, tbl);

COMMENT ON TABLE dbgauge.checksums IS
    'dbgauge checksum chunks: a chunk differs when this_cnt/this_crc differ from source_cnt/source_crc';
