"""The direct walk hashes early chunks by key bucket and later ones plainly (checks/drift/walk.py
`plain_pays`): a difference in a plainly hashed chunk must still be found and named, through the
bucket read the verdict makes for it, and the walk must go back to buckets after it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from checks.drift import ChecksumOptions, run_checksum
from checks.drift import walk as walk_module
from tests.helpers.servers import Sandbox, caught_up, execute
from toolkit.app import load_config

pytestmark = pytest.mark.integration

ROWS = 30000


@pytest.fixture
def late_drift(sandbox: Sandbox) -> Iterator[set[tuple[str, int]]]:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_late",
            "CREATE TABLE app.drift_late (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
            "INSERT INTO app.drift_late SELECT seq, CONCAT('v-', seq) FROM app.seq_1_to_30000")
    caught_up(sandbox)
    # Far from the start, where the walk has long been hashing plainly.
    execute(sandbox, "mariadb-replica",
            "UPDATE app.drift_late SET v = 'changed' WHERE id IN (24000, 29990)",
            "DELETE FROM app.drift_late WHERE id = 27001", log_bin=False)
    try:
        yield {("changed", 24000), ("changed", 29990), ("missing", 27001)}
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_late")
        caught_up(sandbox)


def test_a_difference_in_a_plainly_hashed_chunk_is_named(
        sandbox: Sandbox, late_drift: set[tuple[str, int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    decisions: list[bool] = []
    real = walk_module.plain_pays

    def spy(walked: float, chunk: float) -> bool:
        decisions.append(real(walked, chunk))
        return decisions[-1]

    monkeypatch.setattr(walk_module, "plain_pays", spy)
    targets = {t.name: t for t in load_config(sandbox.config).all_targets()}
    result = run_checksum(targets["mariadb-primary"], [targets["mariadb-replica"]],
                          ChecksumOptions(tables=("app.drift_late",), method="direct",
                                          # fixed 1000-row chunks: 30 of them,
                                          # whatever the machine's speed
                                          whole_table_time=0, chunk_size=1000,
                                          retry_delay=0.05,
                                          keep_state=False))
    table: dict[str, Any] = result.evidence["tables"][0]
    assert {(d["kind"], d["key"]["id"]) for d in table["differences"]} == late_drift
    assert table["rows"] == ROWS and table["chunks"] > 10
    # The walk hashed some chunks plainly, and once a chunk differed asked no more:
    # every later chunk went back to buckets.
    assert True in decisions
    assert len(decisions) < table["chunks"]
