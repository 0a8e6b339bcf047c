"""How the direct walk hashes chunks over an integer key (checks/drift/walk.py).

- MariaDB sides read every chunk by key bucket, one range read per bucket joined by UNION ALL
  (`TableQueries.chunk_buckets`), never plainly: differences anywhere, rows on the replica only
  below the source's lowest key and beyond its highest among them, are named from the walk's
  own bucket hashes.
- A PostgreSQL side groups by bucket, which costs more, so the walk hashes later chunks plainly
  (`plain_pays`): a difference in a plainly hashed chunk must still be named, through the bucket
  read the verdict makes for it, and the walk must go back to buckets after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from checks.drift import ChecksumOptions, run_checksum
from checks.drift import walk as walk_module
from tests.helpers.servers import Sandbox, caught_up, execute
from tests.integration.test_drift_postgres import caught_up as pg_caught_up
from tests.integration.test_drift_postgres import replicated_tables
from tests.integration.test_drift_postgres import source as pg_source
from tests.integration.test_drift_postgres import subscriber as pg_subscriber
from toolkit.app import load_config

pytestmark = pytest.mark.integration

ROWS = 30000
# Fixed 1000-row chunks: 30 of them, whatever the machine's speed.
OPTIONS = {"method": "direct", "whole_table_time": 0, "chunk_size": 1000, "retry_delay": 0.05,
           "keep_state": False}


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every plain-or-bucket decision the walk asks `plain_pays` for."""
    decisions: list[bool] = []
    real = walk_module.plain_pays

    def spy(walked: float, chunk: float) -> bool:
        decisions.append(real(walked, chunk))
        return decisions[-1]

    monkeypatch.setattr(walk_module, "plain_pays", spy)
    return decisions


@pytest.fixture
def mariadb_drift(sandbox: Sandbox) -> Iterator[set[tuple[str, int]]]:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_late",
            "CREATE TABLE app.drift_late (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
            "INSERT INTO app.drift_late SELECT seq, CONCAT('v-', seq) FROM app.seq_1_to_30000")
    caught_up(sandbox)
    execute(sandbox, "mariadb-replica",
            "UPDATE app.drift_late SET v = 'changed' WHERE id IN (2, 24000, 29990)",
            "DELETE FROM app.drift_late WHERE id = 27001",
            # on the replica only, outside the source's keys: the walk's open ends
            "INSERT INTO app.drift_late VALUES (-100000, 'x'), (0, 'x'), (30001, 'x'), (99999, 'x')",
            log_bin=False)
    try:
        yield {("changed", 2), ("changed", 24000), ("changed", 29990), ("missing", 27001),
               ("extra", -100000), ("extra", 0), ("extra", 30001), ("extra", 99999)}
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_late")
        caught_up(sandbox)


def test_mariadb_chunks_are_read_by_bucket_and_name_every_difference(
        sandbox: Sandbox, mariadb_drift: set[tuple[str, int]], spied: list[bool]) -> None:
    targets = {t.name: t for t in load_config(sandbox.config).all_targets()}
    result = run_checksum(targets["mariadb-primary"], [targets["mariadb-replica"]],
                          ChecksumOptions(tables=("app.drift_late",), **OPTIONS))
    table: dict[str, Any] = result.evidence["tables"][0]
    assert {(d["kind"], d["key"]["id"]) for d in table["differences"]} == mariadb_drift
    assert table["rows"] == ROWS and table["chunks"] > 10
    assert spied == []  # bucket reads cost MariaDB no more than plain ones: never plain


def test_a_difference_in_a_plainly_hashed_postgres_chunk_is_named(
        sandbox: Sandbox, spied: list[bool]) -> None:
    ddl = {"drift_late": "CREATE TABLE drift_late (id int PRIMARY KEY, v varchar(40) NOT NULL)"}
    with replicated_tables(sandbox, ddl) as (primary, sub):
        primary.execute("INSERT INTO drift_late SELECT g, 'v-' || g "
                        "FROM generate_series(1, %s) g", (ROWS,))
        pg_caught_up(primary, sub)
        # Far from the start, where the walk has long been hashing plainly.
        sub.execute("UPDATE drift_late SET v = 'changed' WHERE id IN (24000, 29990)")
        sub.execute("DELETE FROM drift_late WHERE id = 27001")
        result = run_checksum(pg_source(sandbox), [pg_subscriber(sandbox)],
                              ChecksumOptions(tables=("public.drift_late",), **OPTIONS))
    table: dict[str, Any] = result.evidence["tables"][0]
    assert {(d["kind"], d["key"]["id"]) for d in table["differences"]} == {
        ("changed", 24000), ("changed", 29990), ("missing", 27001)}
    assert table["rows"] == ROWS and table["chunks"] > 10
    # The walk hashed some chunks plainly, and once a chunk differed asked no more:
    # every later chunk went back to buckets.
    assert True in spied
    assert len(spied) < table["chunks"]

