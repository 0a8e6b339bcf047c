"""The whole-table pre-check of `dbgauge checksum` on the sandbox's MariaDB primary and
replica: CHECKSUM TABLE on both at once settles a quiet, equal table in one pass, and
everything else falls through to the chunk walk (checks/drift/whole_table.py).

Drift is made on the replica with sql_log_bin=0; drifted tables are dropped at the end.
"""

from __future__ import annotations

import pytest

from tests.helpers.drift import binlog_watch, exit_code, found, outside_dbgauge, table_docs
from tests.helpers.drift import mariadb_check as check
from tests.helpers.servers import Sandbox, caught_up, execute

pytestmark = pytest.mark.integration

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
            if method == "direct":
                assert written == []
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
        # Interrupted by the server (max_statement_time): the walk still compares the table.
        slow = check(sandbox, "direct", tables[:1], whole_table_idle=0,
                     whole_table_time=0.000001, whole_table_rate=1e12)
        assert not table_docs(slow)[0]["whole_table"] and exit_code(slow) == 0
        assert table_docs(slow)[0]["rows"] == 20000
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
