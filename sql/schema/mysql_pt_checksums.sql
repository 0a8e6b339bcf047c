-- --replicate DB.TBL (checks/drift/replicate.py), MySQL 8.0/8.4 and MariaDB 10.6+: the
-- replicate table in pt-table-checksum's layout (its --replicate documentation,
-- MAGIC_create_replicate), so pt's --replicate-check-only query and dashboards built on
-- percona.checksums read dbgauge's results. Created on the source when missing, replicated
-- to every replica. master_cnt/master_crc hold the source's values, this_* each server's.
-- lower/upper_boundary hold dbgauge's chunk bounds as JSON. {database} and {replicate} are
-- filled with quote_ident names only. utf8mb4 rather than pt's utf8 (a superset).
CREATE DATABASE IF NOT EXISTS {database};
CREATE TABLE IF NOT EXISTS {replicate} (
  db             CHAR(64)     NOT NULL,
  tbl            CHAR(64)     NOT NULL,
  chunk          INT          NOT NULL,
  chunk_time     FLOAT            NULL,
  chunk_index    VARCHAR(200)     NULL,
  lower_boundary TEXT             NULL,
  upper_boundary TEXT             NULL,
  this_crc       CHAR(40)     NOT NULL,
  this_cnt       INT          NOT NULL,
  master_crc     CHAR(40)         NULL,
  master_cnt     INT              NULL,
  ts             TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (db, tbl, chunk),
  INDEX ts_db_tbl (ts, db, tbl)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
