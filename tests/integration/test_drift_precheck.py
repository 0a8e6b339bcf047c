"""The whole-table pre-check of `dbgauge checksum` on the sandbox's MariaDB primary and
replica: CHECKSUM TABLE on both at once settles a quiet, equal table in one pass, and
everything else falls through to the chunk walk (checks/drift/whole_table.py).

Drift is made on the replica with sql_log_bin=0; drifted tables are dropped at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dbgauge.checks.drift import whole_table
from tests.helpers.drift import (
    binlog_watch,
    exit_code,
    found,
    mariadb_table,
    outside_dbgauge,
    table_docs,
)
from tests.helpers.drift import mariadb_check as check
from tests.helpers.servers import Sandbox, caught_up, execute, one

pytestmark = pytest.mark.integration

LARGE_ROWS = 600_000
# The speed a run assumes before it has measured one, lowered from 1M rows/s for the probe
# test: the assumed speed must not give LARGE_ROWS in LARGE_LIMIT (6 s at 100k rows/s), and
# the probe must find CHECKSUM TABLE fast enough to, which it does with a wide margin even
# beside other tests on a loaded machine (at 1M rows/s and 0.5 s it needed 1.2M rows/s,
# which a busy 2-core machine did not always give: the table was walked).
ASSUMED_RATE = 100_000.0
LARGE_LIMIT = 5.0


def checksum_statements(sandbox: Sandbox) -> dict[str, int]:
    """How many CHECKSUM TABLE statements each MariaDB server has run (Com_checksum;
    nothing else runs them on the sandbox)."""
    return {name: int(one(sandbox, name, "SHOW GLOBAL STATUS LIKE 'Com_checksum'")[1])
            for name in ("mariadb-primary", "mariadb-replica")}


@pytest.fixture(scope="module")
def large_table(sandbox: Sandbox) -> Iterator[None]:
    """app.drift_large, LARGE_ROWS rows whose estimate (after ANALYZE) is above what the
    assumed speed allows in LARGE_LIMIT, and app.drift_nothing, an empty table."""
    with mariadb_table(sandbox, "app.drift_nothing",
                       "CREATE TABLE app.drift_nothing (id INT NOT NULL PRIMARY KEY)"), \
            mariadb_table(sandbox, "app.drift_large",
                          "CREATE TABLE app.drift_large (id INT NOT NULL PRIMARY KEY, "
                          "k INT NOT NULL, c CHAR(60) NOT NULL)",
                          "INSERT INTO app.drift_large SELECT seq, seq * 7 % 1000, "
                          "CONCAT('row-', seq) FROM app.seq_1_to_600000",  # LARGE_ROWS
                          "ANALYZE TABLE app.drift_large"):
        estimate = one(sandbox, "mariadb-primary", "SELECT table_rows FROM "
                       "information_schema.tables WHERE table_schema = 'app' "
                       "AND table_name = 'drift_large'")[0]
        assert estimate > ASSUMED_RATE * LARGE_LIMIT, "the table would not need a probe"
        yield


@pytest.mark.parametrize("method", ["direct", "replicated"])
def test_a_table_too_large_for_the_assumed_speed_is_probed_then_compared_whole(
        sandbox: Sandbox, sbr_user: None, large_table: None, method: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before any pre-check has measured a speed, the assumed one would walk the table;
    the probe of its first keys measures the real speed, and one CHECKSUM TABLE per side
    settles it. The empty table compared first does not set the speed for the run (its
    pre-check read too few rows to tell one: it used to make every later table walk)."""
    monkeypatch.setattr(whole_table, "ASSUMED_RATE", ASSUMED_RATE)
    before = checksum_statements(sandbox)
    with binlog_watch(sandbox) as written:
        result = check(sandbox, method, ("app.drift_nothing", "app.drift_large"),
                       whole_table_idle=0, whole_table_time=LARGE_LIMIT)
    t = {r["table"]: r for r in table_docs(result)}
    assert exit_code(result) == 0, result.evidence
    assert (t["app.drift_nothing"]["whole_table"], t["app.drift_nothing"]["rows"]) == (True, 0)
    assert (t["app.drift_large"]["whole_table"], t["app.drift_large"]["rows"],
            t["app.drift_large"]["chunks"]) == (True, LARGE_ROWS, 1)
    assert checksum_statements(sandbox) == {name: n + 2 for name, n in before.items()}
    assert outside_dbgauge(written) == []  # the probe reads, like every chunk


def test_a_whole_table_checksum_the_server_interrupts_falls_back_to_the_walk(
        sandbox: Sandbox, large_table: None) -> None:
    """CHECKSUM TABLE interrupted by the server (max_statement_time, from
    --whole-table-time): the walk still compares the table. On LARGE_ROWS rows the
    checksum takes far longer than the server takes to interrupt it (a 20,000-row table
    was sometimes done before the kill landed)."""
    before = checksum_statements(sandbox)
    slow = check(sandbox, "direct", ("app.drift_large",), whole_table_idle=0,
                 whole_table_time=0.000001, whole_table_rate=1e12)
    doc = table_docs(slow)[0]
    assert exit_code(slow) == 0, slow.evidence
    assert (doc["whole_table"], doc["rows"]) == (False, LARGE_ROWS) and doc["chunks"] > 1
    assert checksum_statements(sandbox) == {name: n + 1 for name, n in before.items()}


def test_a_table_the_probe_finds_too_slow_is_walked_without_checksum_table(
        sandbox: Sandbox, large_table: None) -> None:
    """A probe that expects the table to take longer than --whole-table-time sends it to
    the chunk walk without trying CHECKSUM TABLE (which would only run into the limit)."""
    before = checksum_statements(sandbox)
    result = check(sandbox, "direct", ("app.drift_large",), whole_table_idle=0,
                   whole_table_time=0.01)
    doc = table_docs(result)[0]
    assert exit_code(result) == 0, result.evidence
    assert (doc["whole_table"], doc["rows"]) == (False, LARGE_ROWS) and doc["chunks"] > 1
    assert checksum_statements(sandbox) == before


def test_whole_table_precheck_proves_quiet_equal_tables_in_one_pass(
        sandbox: Sandbox, sbr_user: None) -> None:
    """Equal copies of a table nobody writes are proven equal by one CHECKSUM TABLE per
    side, which also counts the rows; anything else falls through to the chunk walk."""
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_whole, app.drift_empty",
            "CREATE TABLE app.drift_whole (id INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL, "
            "d DOUBLE NULL, b BLOB NULL, KEY v_1 (v))",
            "INSERT INTO app.drift_whole SELECT seq, IF(seq % 3, CONCAT('v', seq), NULL), "
            "seq / 7, UNHEX(MD5(seq)) FROM app.seq_1_to_20000",
            "CREATE TABLE app.drift_empty (id INT NOT NULL PRIMARY KEY)")
    tables = ("app.drift_whole", "app.drift_empty")
    try:
        caught_up(sandbox)
        for method in ("direct", "replicated"):
            with binlog_watch(sandbox) as written:
                result = check(sandbox, method, tables, whole_table_idle=0)
            t = {r["table"]: r for r in table_docs(result)}
            assert exit_code(result) == 0, result.evidence
            assert (t["app.drift_whole"]["whole_table"], t["app.drift_whole"]["rows"],
                    t["app.drift_whole"]["chunks"]) == (True, 20000, 1), method
            assert (t["app.drift_empty"]["whole_table"],
                    t["app.drift_empty"]["rows"]) == (True, 0)
            # CHECKSUM TABLE is not logged: direct writes nothing at all, replicated only
            # clears its own chunk rows of earlier runs.
            assert outside_dbgauge(written) == []
            if method == "direct":  # the daemon's heartbeat writer may beat meanwhile
                assert [w for w in written if w != "dbgauge.heartbeat"] == []
        doc = check(sandbox, "direct", tables, whole_table_idle=0).evidence
        assert [t["whole_table"] for t in doc["tables"]] == [True, True]

        walked = check(sandbox, "direct", tables[:1], whole_table_time=0, chunk_time=0.005,
                       initial_chunk_rows=500)
        assert not table_docs(walked)[0]["whole_table"] and table_docs(walked)[0]["chunks"] > 1
        assert exit_code(walked) == 0 and table_docs(walked)[0]["rows"] == 20000
        # Written within whole_table_idle seconds: a write may be in flight, so no pre-check.
        execute(sandbox, "mariadb-primary", "UPDATE app.drift_whole SET v = 'w' WHERE id = 1")
        caught_up(sandbox)
        busy = check(sandbox, "direct", tables[:1], whole_table_idle=3600)
        assert not table_docs(busy)[0]["whole_table"] and exit_code(busy) == 0
        # Drift on the replica: the values differ, and the walk names the row.
        execute(sandbox, "mariadb-replica",
                "UPDATE app.drift_whole SET d = d + 1e-9 WHERE id = 777", log_bin=False)
        drift = check(sandbox, "direct", tables[:1], whole_table_idle=0)
        assert found(drift) == {"app.drift_whole": {("changed", (777,))}}
        assert not table_docs(drift)[0]["whole_table"]
    finally:
        execute(sandbox, "mariadb-primary",
                "DROP TABLE IF EXISTS app.drift_whole, app.drift_empty")
        caught_up(sandbox)


def test_whole_table_precheck_needs_the_same_row_layout(sandbox: Sandbox) -> None:
    """CHECKSUM TABLE hashes the row image, so a replica with the same values in another
    column order would differ: such a table skips the pre-check and is walked (equal)."""
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_layout",
            "CREATE TABLE app.drift_layout (id INT NOT NULL PRIMARY KEY, a INT, b VARCHAR(9))",
            "INSERT INTO app.drift_layout SELECT seq, seq, CONCAT('b', seq) "
            "FROM app.seq_1_to_2000")
    try:
        caught_up(sandbox)
        execute(sandbox, "mariadb-replica",
                "ALTER TABLE app.drift_layout MODIFY b VARCHAR(9) AFTER id", log_bin=False)
        result = check(sandbox, "direct", ("app.drift_layout",), whole_table_idle=0)
        assert exit_code(result) == 0, result.evidence
        assert not table_docs(result)[0]["whole_table"] and table_docs(result)[0]["rows"] == 2000
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_layout")
        caught_up(sandbox)
