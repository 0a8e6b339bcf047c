"""The direct walk reads every chunk over an integer key by key bucket, one range read per bucket
joined by UNION ALL (`TableQueries.chunk_buckets`, checks/drift/chunks.py `bucket_pieces`), on
MariaDB and on PostgreSQL: differences anywhere, rows on the replica only below the source's
lowest key and beyond its highest among them, are named from the walk's own bucket hashes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from checks.drift import ChecksumOptions, run_checksum
from tests.helpers.servers import Sandbox, caught_up, execute
from tests.integration.test_drift_postgres import caught_up as pg_caught_up
from tests.integration.test_drift_postgres import replicated_tables
from tests.integration.test_drift_postgres import source as pg_source
from tests.integration.test_drift_postgres import subscriber as pg_subscriber
from toolkit.app import load_config

pytestmark = pytest.mark.integration

ROWS = 300_000
# Fixed 100,000-row chunks of 3 buckets each (at least 32768 keys a bucket), whatever the
# machine's speed.
OPTIONS = {"method": "direct", "whole_table_time": 0, "chunk_size": 100_000, "retry_delay": 0.05,
           "keep_state": False}
# Changed and missing rows at both ends and inside; rows on the replica only far below the
# source's lowest key and beyond its highest (the walk's open first and last chunks).
DRIFT = ["UPDATE drift_late SET v = 'changed' WHERE id IN (2, 140000, 299990)",
         "DELETE FROM drift_late WHERE id = 270001",
         "INSERT INTO drift_late VALUES (-1000000, 'x'), (0, 'x'), (300001, 'x'), (999999, 'x')"]
EXPECTED = {("changed", 2), ("changed", 140000), ("changed", 299990), ("missing", 270001),
            ("extra", -1000000), ("extra", 0), ("extra", 300001), ("extra", 999999)}


def named(result: Any) -> set[tuple[str, int]]:
    table: dict[str, Any] = result.evidence["tables"][0]
    assert table["rows"] == ROWS and table["chunks"] >= 3, table
    return {(d["kind"], d["key"]["id"]) for d in table["differences"]}


@pytest.fixture
def mariadb_drift(sandbox: Sandbox) -> Iterator[None]:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_late",
            "CREATE TABLE app.drift_late (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
            "INSERT INTO app.drift_late SELECT seq, CONCAT('v-', seq) FROM app.seq_1_to_300000")
    caught_up(sandbox)
    execute(sandbox, "mariadb-replica", "USE app", *DRIFT, log_bin=False)
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_late")
        caught_up(sandbox)


def test_mariadb_bucket_reads_name_every_difference(sandbox: Sandbox,
                                                     mariadb_drift: None) -> None:
    targets = {t.name: t for t in load_config(sandbox.config).all_targets()}
    result = run_checksum(targets["mariadb-primary"], [targets["mariadb-replica"]],
                          ChecksumOptions(tables=("app.drift_late",), **OPTIONS))
    assert named(result) == EXPECTED


def test_postgres_bucket_reads_name_every_difference(sandbox: Sandbox) -> None:
    ddl = {"drift_late": "CREATE TABLE drift_late (id int PRIMARY KEY, v varchar(40) NOT NULL)"}
    with replicated_tables(sandbox, ddl) as (primary, sub):
        primary.execute("INSERT INTO drift_late SELECT g, 'v-' || g "
                        "FROM generate_series(1, %s) g", (ROWS,))
        pg_caught_up(primary, sub)
        for statement in DRIFT:
            sub.execute(statement)
        result = run_checksum(pg_source(sandbox), [pg_subscriber(sandbox)],
                              ChecksumOptions(tables=("public.drift_late",), **OPTIONS))
    assert named(result) == EXPECTED
