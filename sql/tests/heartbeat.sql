-- pgTAP suite for dbgauge.heartbeat (sql/schema/postgres/heartbeat.sql).
-- Installs the DDL (twice: it must be idempotent) inside the test transaction and rolls
-- everything back. Run: dbgauge pgtap run sql/tests --dsn postgresql://user@host/db
BEGIN;
SET LOCAL client_min_messages = warning;
\ir ../schema/postgres/heartbeat.sql
\ir ../schema/postgres/heartbeat.sql

SELECT plan(26);

SELECT has_schema('dbgauge', 'schema dbgauge exists');
SELECT has_table('dbgauge'::name, 'heartbeat'::name, 'table dbgauge.heartbeat exists');
SELECT columns_are('dbgauge'::name, 'heartbeat'::name,
                   ARRAY['system_identifier', 'node_name', 'ts', 'timeline_id', 'wal_lsn']::name[],
                   'heartbeat has exactly the expected columns');

SELECT col_type_is('dbgauge'::name, 'heartbeat'::name, 'system_identifier'::name, 'bigint', 'system_identifier is bigint');
SELECT col_type_is('dbgauge'::name, 'heartbeat'::name, 'node_name'::name, 'text', 'node_name is text');
SELECT col_type_is('dbgauge'::name, 'heartbeat'::name, 'ts'::name, 'timestamp with time zone', 'ts is timestamptz');
SELECT col_type_is('dbgauge'::name, 'heartbeat'::name, 'timeline_id'::name, 'integer', 'timeline_id is integer');
SELECT col_type_is('dbgauge'::name, 'heartbeat'::name, 'wal_lsn'::name, 'pg_lsn', 'wal_lsn is pg_lsn');

SELECT col_not_null('dbgauge'::name, 'heartbeat'::name, 'system_identifier'::name, 'system_identifier is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'heartbeat'::name, 'node_name'::name, 'node_name is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'heartbeat'::name, 'ts'::name, 'ts is NOT NULL');
SELECT col_is_null('dbgauge'::name, 'heartbeat'::name, 'timeline_id'::name, 'timeline_id may be NULL');
SELECT col_is_null('dbgauge'::name, 'heartbeat'::name, 'wal_lsn'::name, 'wal_lsn may be NULL');

SELECT col_default_is('dbgauge'::name, 'heartbeat'::name, 'ts'::name, 'clock_timestamp()'::text,
                      'ts defaults to clock_timestamp(), not the transaction start');
SELECT col_hasnt_default('dbgauge'::name, 'heartbeat'::name, 'node_name'::name, 'node_name has no default');

SELECT has_pk('dbgauge'::name, 'heartbeat'::name, 'heartbeat has a primary key');
SELECT col_is_pk('dbgauge'::name, 'heartbeat'::name, ARRAY['system_identifier', 'node_name']::name[],
                 'primary key is (system_identifier, node_name)');
SELECT indexes_are('dbgauge'::name, 'heartbeat'::name, ARRAY['heartbeat_pkey']::name[],
                   'heartbeat has only its primary-key index');
SELECT has_check('dbgauge'::name, 'heartbeat'::name, 'heartbeat has CHECK constraints');

-- Behaviour: what the writer and the reader rely on.
SELECT lives_ok(
    $$INSERT INTO dbgauge.heartbeat (system_identifier, node_name, timeline_id, wal_lsn)
      VALUES (7000000000000000001, 'pg-primary', 1, '0/16B3748')$$,
    'a writer inserts its row');
SELECT throws_ok(
    $$INSERT INTO dbgauge.heartbeat (system_identifier, node_name)
      VALUES (7000000000000000001, 'pg-primary')$$,
    '23505', NULL, 'one row per (cluster, node)');
SELECT lives_ok(
    $$INSERT INTO dbgauge.heartbeat (system_identifier, node_name, timeline_id)
      VALUES (7000000000000000001, 'pg-primary', 2)
      ON CONFLICT (system_identifier, node_name)
      DO UPDATE SET ts = excluded.ts, timeline_id = excluded.timeline_id$$,
    'the writer upserts on the primary key');
SELECT is((SELECT timeline_id FROM dbgauge.heartbeat WHERE node_name = 'pg-primary'), 2,
          'the upsert replaced the row');
SELECT throws_ok(
    $$INSERT INTO dbgauge.heartbeat (system_identifier, node_name) VALUES (1, '')$$,
    '23514', NULL, 'an empty node name is refused');
SELECT throws_ok(
    $$INSERT INTO dbgauge.heartbeat (system_identifier, node_name, timeline_id) VALUES (1, 'x', 0)$$,
    '23514', NULL, 'timelines start at 1');
SELECT cmp_ok((SELECT ts FROM dbgauge.heartbeat WHERE node_name = 'pg-primary'), '<=', clock_timestamp(),
              'ts is not in the future');

SELECT * FROM finish();
ROLLBACK;
