"""postgres_indexes and postgres_exporter's pg_statio_user_indexes_* families made from it,
on rows captured from the sandbox's PostgreSQL 15 (tests/fixtures/postgres-15/indexes.json,
statement indexes.sql with LIMIT 5000, written by capture_activity.py: a table with a
primary key scanned once and a second index). Expected values are upstream's
(collector/pg_statio_user_indexes.go at postgres_exporter dbb1987): the connected database
only, labels schemaname, relname, indexrelname, NULL as "unknown" and 0.
"""

from __future__ import annotations

from dbgauge.collectors._pg_databases import DatabaseRead
from dbgauge.collectors.postgres_indexes import (
    DatabaseIndexes,
    PgIndexesFacts,
    PostgresIndexes,
    parse_indexes,
)
from tests.helpers import as_dict
from tests.helpers.captured import json_rows
from tests.unit.test_dialect_postgres import translate

ROWS = json_rows("postgres-15/indexes.json", "PostgreSQL 15")
PKEY = frozenset({("schemaname", "public"), ("relname", "dbgauge_fixture_indexed"),
                  ("indexrelname", "dbgauge_fixture_indexed_pkey")})


def facts(*reads: DatabaseRead[DatabaseIndexes]) -> PgIndexesFacts:
    return PgIndexesFacts(reads)


def test_the_connected_database_s_indexes_as_the_peer_reads_them() -> None:
    read = DatabaseRead("app", parse_indexes(ROWS, connected=True))
    peer = translate("postgres_indexes", facts(read))
    assert peer[("pg_statio_user_indexes_idx_blks_read_total", PKEY)] == 5
    assert peer[("pg_statio_user_indexes_idx_blks_hit_total", PKEY)] == 1599
    assert len(peer) == 4
    ours = as_dict("postgres_indexes", PostgresIndexes().samples(facts(read)))
    labels = frozenset({("database", "app"), ("schema", "public"),
                        ("table", "dbgauge_fixture_indexed"),
                        ("index", "dbgauge_fixture_indexed_pkey")})
    assert ours[("dbgauge_postgres_index_blocks_read_total", labels)] == 5
    assert ours[("dbgauge_postgres_index_scans_total", labels)] == 1
    assert ours[("dbgauge_postgres_indexes", frozenset({("database", "app")}))] == 2
    assert ours[("dbgauge_postgres_indexes_not_exported", frozenset({("database", "app")}))] \
        == 0


def test_other_databases_are_dbgauge_s_only() -> None:
    """The peer has no datname label: another database's indexes would collide."""
    other = DatabaseRead("second", parse_indexes(ROWS, "second"))
    assert translate("postgres_indexes", facts(other)) == {}
    failed = DatabaseRead[DatabaseIndexes]("third", error="no CONNECT")
    ours = as_dict("postgres_indexes", PostgresIndexes().samples(facts(other, failed)))
    assert ours[("dbgauge_postgres_indexes_database_success",
                 frozenset({("database", "third")}))] == 0


def test_the_limit_is_said_and_nulls_are_the_peer_s_unknown_and_zero() -> None:
    row = {**ROWS[0], "schemaname": None, "idx_blks_read": None, "indexes": 7}
    read = DatabaseRead("app", parse_indexes([row], connected=True))
    peer = translate("postgres_indexes", facts(read))
    labels = PKEY - {("schemaname", "public")} | {("schemaname", "unknown")}
    assert peer[("pg_statio_user_indexes_idx_blks_read_total", labels)] == 0
    ours = as_dict("postgres_indexes", PostgresIndexes().samples(facts(read)))
    assert ours[("dbgauge_postgres_indexes_not_exported", frozenset({("database", "app")}))] \
        == 6
    assert not [n for n, _ in ours if n == "dbgauge_postgres_index_blocks_read_total"]
