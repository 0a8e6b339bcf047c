-- dbgauge.checksums: chunk checksums of the replicated method (checks/drift/), MySQL
-- 8.0/8.4 and MariaDB 10.6+; pt-table-checksum's percona.checksums with the column names of
-- the PostgreSQL table (sql/schema/postgres/checksums.sql). Created on the source by
-- `dbgauge checksum --method replicated` and replicated to every replica. The source writes a
-- chunk's this_cnt/this_crc with a statement-based REPLACE ... SELECT that each replica
-- re-executes on its own rows, then copies its own values into source_cnt/source_crc with a
-- replicated UPDATE: on a replica, a chunk differs when this_* and source_* differ.
-- lower/upper_boundary hold the chunk's key bounds as JSON (exclusive lower, inclusive upper).
CREATE DATABASE IF NOT EXISTS dbgauge;
CREATE TABLE IF NOT EXISTS dbgauge.checksums (
  db             varchar(64)     NOT NULL,
  tbl            varchar(64)     NOT NULL,
  chunk          int unsigned    NOT NULL,
  chunk_time     double          DEFAULT NULL,
  chunk_index    varchar(64)     DEFAULT NULL,
  lower_boundary text            DEFAULT NULL,
  upper_boundary text            DEFAULT NULL,
  this_crc       varchar(64)     NOT NULL,
  this_cnt       bigint unsigned NOT NULL,
  source_crc     varchar(64)     DEFAULT NULL,
  source_cnt     bigint unsigned DEFAULT NULL,
  ts             timestamp       NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (db, tbl, chunk),
  KEY checksums_ts_db_tbl (ts, db, tbl)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
