-- Heartbeat table of toolkit/heartbeat.py (HeartbeatWriter), MySQL 8.0/8.4 and MariaDB 10.6+.
-- Columns and types are pt-heartbeat's, so `pt-heartbeat --check --utc` reads dbgauge's rows
-- and dbgauge reads pt-heartbeat's. {schema} and {table} are filled in by quote_table().
-- dbgauge writes ts and server_id only; the binlog/relay position columns stay NULL.
CREATE DATABASE IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {table} (
  ts                    varchar(26)     NOT NULL,
  server_id             int unsigned    NOT NULL PRIMARY KEY,
  file                  varchar(255)    DEFAULT NULL,
  position              bigint unsigned DEFAULT NULL,
  relay_master_log_file varchar(255)    DEFAULT NULL,
  exec_master_log_pos   bigint unsigned DEFAULT NULL
) ENGINE=InnoDB
