-- pgTAP suite for dbgauge.checksums (sql/schema/postgres/checksums.sql).
-- Installs the DDL (twice: it must be idempotent) inside the test transaction and rolls
-- everything back. Run: dbgauge pgtap run sql/tests --dsn postgresql://user@host/db
BEGIN;
SET LOCAL client_min_messages = warning;
\ir ../schema/postgres/checksums.sql
\ir ../schema/postgres/checksums.sql

SELECT plan(39);

SELECT has_schema('dbgauge', 'schema dbgauge exists');
SELECT has_table('dbgauge'::name, 'checksums'::name, 'table dbgauge.checksums exists');
SELECT columns_are('dbgauge'::name, 'checksums'::name,
                   ARRAY['db', 'tbl', 'chunk', 'chunk_time', 'chunk_index', 'lower_boundary',
                         'upper_boundary', 'this_crc', 'this_cnt', 'source_crc', 'source_cnt',
                         'ts']::name[],
                   'checksums has exactly the expected columns');

SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'db'::name, 'text', 'db is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'tbl'::name, 'text', 'tbl is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'chunk'::name, 'integer', 'chunk is integer');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'chunk_time'::name, 'double precision', 'chunk_time is double precision');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'chunk_index'::name, 'text', 'chunk_index is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'lower_boundary'::name, 'text', 'lower_boundary is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'upper_boundary'::name, 'text', 'upper_boundary is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'this_crc'::name, 'text', 'this_crc is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'this_cnt'::name, 'bigint', 'this_cnt is bigint');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'source_crc'::name, 'text', 'source_crc is text');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'source_cnt'::name, 'bigint', 'source_cnt is bigint');
SELECT col_type_is('dbgauge'::name, 'checksums'::name, 'ts'::name, 'timestamp with time zone', 'ts is timestamptz');

SELECT col_not_null('dbgauge'::name, 'checksums'::name, 'db'::name, 'db is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'checksums'::name, 'tbl'::name, 'tbl is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'checksums'::name, 'chunk'::name, 'chunk is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'checksums'::name, 'this_crc'::name, 'this_crc is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'checksums'::name, 'this_cnt'::name, 'this_cnt is NOT NULL');
SELECT col_not_null('dbgauge'::name, 'checksums'::name, 'ts'::name, 'ts is NOT NULL');
SELECT col_is_null('dbgauge'::name, 'checksums'::name, 'source_crc'::name, 'source_crc is NULL until the source value is copied');
SELECT col_is_null('dbgauge'::name, 'checksums'::name, 'source_cnt'::name, 'source_cnt is NULL until the source value is copied');
SELECT col_is_null('dbgauge'::name, 'checksums'::name, 'lower_boundary'::name, 'lower_boundary may be NULL (first chunk)');
SELECT col_is_null('dbgauge'::name, 'checksums'::name, 'upper_boundary'::name, 'upper_boundary may be NULL (last chunk)');

SELECT col_default_is('dbgauge'::name, 'checksums'::name, 'ts'::name, 'now()'::text, 'ts defaults to now()');
SELECT col_hasnt_default('dbgauge'::name, 'checksums'::name, 'this_crc'::name, 'this_crc has no default');

SELECT has_pk('dbgauge'::name, 'checksums'::name, 'checksums has a primary key');
SELECT col_is_pk('dbgauge'::name, 'checksums'::name, ARRAY['db', 'tbl', 'chunk']::name[],
                 'primary key is (db, tbl, chunk)');
SELECT indexes_are('dbgauge'::name, 'checksums'::name, ARRAY['checksums_pkey', 'checksums_ts_db_tbl']::name[],
                   'checksums has its primary key and the (ts, db, tbl) index');
SELECT has_index('dbgauge'::name, 'checksums'::name, 'checksums_ts_db_tbl'::name, ARRAY['ts', 'db', 'tbl']::name[],
                 'index checksums_ts_db_tbl is on (ts, db, tbl)');

-- Behaviour: what a checksum run relies on.
SELECT lives_ok(
    $$INSERT INTO dbgauge.checksums (db, tbl, chunk, chunk_time, chunk_index, lower_boundary,
                                    upper_boundary, this_crc, this_cnt)
      VALUES ('app', 'public.orders', 1, 0.01, 'orders_pkey', NULL, '1000', 'a1b2c3d4', 1000),
             ('app', 'public.orders', 2, 0.01, 'orders_pkey', '1000', NULL, 'ffff0000', 10)$$,
    'a run writes its chunks');
SELECT throws_ok(
    $$INSERT INTO dbgauge.checksums (db, tbl, chunk, this_crc, this_cnt)
      VALUES ('app', 'public.orders', 1, 'x', 1)$$,
    '23505', NULL, 'one row per (db, tbl, chunk)');
SELECT lives_ok(
    $$UPDATE dbgauge.checksums SET source_crc = 'a1b2c3d4', source_cnt = 1000 WHERE chunk = 1;
      UPDATE dbgauge.checksums SET source_crc = 'ffff0001', source_cnt = 10 WHERE chunk = 2$$,
    'the source values are recorded next to the local ones');
SELECT results_eq(
    $$SELECT chunk FROM dbgauge.checksums
       WHERE this_cnt <> source_cnt OR this_crc <> source_crc ORDER BY chunk$$,
    $$VALUES (2)$$,
    'a chunk differs when its count or crc differs from the source');
SELECT throws_ok(
    $$INSERT INTO dbgauge.checksums (db, tbl, chunk, this_crc, this_cnt) VALUES ('app', 't', 0, 'x', 1)$$,
    '23514', NULL, 'chunks are numbered from 1');
SELECT throws_ok(
    $$INSERT INTO dbgauge.checksums (db, tbl, chunk, this_crc, this_cnt) VALUES ('app', 't', 1, 'x', -1)$$,
    '23514', NULL, 'a count cannot be negative');
SELECT throws_ok(
    $$INSERT INTO dbgauge.checksums (db, tbl, chunk, this_cnt) VALUES ('app', 't', 1, 1)$$,
    '23502', NULL, 'this_crc is required');
SELECT cmp_ok((SELECT max(ts) FROM dbgauge.checksums), '<=', now(), 'ts is not in the future');

SELECT * FROM finish();
ROLLBACK;
