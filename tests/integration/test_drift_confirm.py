"""How `dbgauge checksum` confirms the rows it names, on the sandbox's MariaDB primary and
replica (checks/drift/recheck.py confirm).

The source reads the candidate rows with a locking read (sql/mariadb/
checksum_confirm_rows.sql): it waits, up to 2 s, for a transaction writing one of them, so
it never misses a write that binary log group commit has already sent to the replica. A row
held longer is being written: it is not reported on that evidence, and the run says so.
Drift is made on the replica with sql_log_bin=0.
"""

from __future__ import annotations

from contextlib import closing

import pytest

from dbgauge.toolkit.render.checksum import render_checksum
from tests.helpers.drift import exit_code, found, mariadb_table, table_docs
from tests.helpers.drift import mariadb_check as check
from tests.helpers.servers import Sandbox, admin, execute

pytestmark = pytest.mark.integration

HELD = "app.drift_held"


def test_a_row_a_source_transaction_holds_is_not_reported_until_released(
        sandbox: Sandbox) -> None:
    with mariadb_table(sandbox, HELD,
                       "CREATE TABLE app.drift_held (id INT NOT NULL PRIMARY KEY, "
                       "v VARCHAR(20) NOT NULL)",
                       "INSERT INTO app.drift_held SELECT seq, CONCAT('v', seq) "
                       "FROM app.seq_1_to_2000"):
        execute(sandbox, "mariadb-replica",
                "UPDATE app.drift_held SET v = 'drifted' WHERE id = 777", log_bin=False)
        with closing(admin(sandbox, "mariadb-primary")) as holder:
            cur = holder.cursor()
            cur.execute("BEGIN")
            cur.execute("SELECT v FROM app.drift_held WHERE id = 777 FOR UPDATE")
            try:
                held = check(sandbox, "direct", (HELD,), whole_table_time=0, retries=2)
            finally:
                holder.rollback()
        doc = table_docs(held)[0]
        assert exit_code(held) == 0, held.evidence
        assert doc["differences"] == [] and doc["differing_chunks"] == {}, doc
        note = ("mariadb-replica: 1 row(s) differed in every re-check but were being written "
                "on the source throughout, so a write in flight cannot be ruled out (id=777)")
        assert any(n.startswith(note) for n in doc["notes"]), doc["notes"]
        assert note in render_checksum(held)

        released = check(sandbox, "direct", (HELD,), whole_table_time=0)
        assert found(released) == {HELD: {("changed", (777,))}}
        assert exit_code(released) == 1
