"""`dbgauge sandbox up` brings back members that diverged from their primary, on the
session sandbox: a promoted PostgreSQL standby and a MariaDB replica with an errant
transaction are rebuilt from their primary, `up` says so, and they replicate again."""

from __future__ import annotations

import subprocess
import uuid

import psycopg
import pytest

from dbgauge.toolkit import sandbox as sb
from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.ports import BASE_PORT
from tests.helpers.servers import Sandbox, execute, replica_caught_up, run

pytestmark = pytest.mark.integration


def up(sandbox: Sandbox) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*DBGAUGE, "sandbox", "up", "--dir", str(sandbox.directory),
                           "--base-port", str(BASE_PORT),
                           "--pg-version", str(sandbox.state.pg_version)],
                          capture_output=True, text=True,
                          timeout=300, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def detail(sandbox: Sandbox, name: str) -> str:
    return {s.name: s.detail for s in sb.status(sandbox.directory)}[name]


def test_up_rebuilds_a_promoted_standby(sandbox: Sandbox) -> None:
    with psycopg.connect(sandbox.admin_dsn("pg-standby"), autocommit=True) as conn:
        assert conn.execute("SELECT pg_promote(true, 30)").fetchone() == (True,)
    assert detail(sandbox, "pg-standby") != "streaming from pg-primary"
    proc = up(sandbox)
    assert "pg-standby was promoted" in proc.stderr
    assert "rebuilding it from pg-primary" in proc.stderr
    assert detail(sandbox, "pg-standby") == "streaming from pg-primary"
    token = uuid.uuid4().hex
    with psycopg.connect(sandbox.admin_dsn("pg-primary"), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS sandbox_rebuild (token text)")
        conn.execute("INSERT INTO sandbox_rebuild VALUES (%s)", (token,))
        (lsn,) = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone() or ("",)
    with psycopg.connect(sandbox.admin_dsn("pg-standby"), autocommit=True) as conn:
        wait_for(lambda: conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                      (lsn,)).fetchone() == (True,) or None,
                 what="the rebuilt standby to replay the primary's writes")
        assert conn.execute("SELECT 1 FROM sandbox_rebuild WHERE token = %s",
                            (token,)).fetchall() == [(1,)]
    # A second `up` finds nothing to rebuild.
    assert "rebuilding" not in up(sandbox).stderr


def test_up_rebuilds_a_replica_with_errant_transactions(sandbox: Sandbox) -> None:
    execute(sandbox, "mariadb-primary",
            "CREATE TABLE IF NOT EXISTS app.sandbox_rebuild (token varchar(40))")
    replica_caught_up(sandbox)
    errant = uuid.uuid4().hex
    run(sandbox, "mariadb-replica", ("INSERT INTO app.sandbox_rebuild VALUES (%s)", (errant,)))
    proc = up(sandbox)
    assert "mariadb-replica has errant transactions (GTID 0-2-" in proc.stderr, proc.stderr
    assert "rebuilding it from mariadb-primary" in proc.stderr
    assert detail(sandbox, "mariadb-replica").startswith("replicating from mariadb-primary")
    token = uuid.uuid4().hex
    run(sandbox, "mariadb-primary", ("INSERT INTO app.sandbox_rebuild VALUES (%s)", (token,)))
    replica_caught_up(sandbox)
    rows = run(sandbox, "mariadb-replica", "SELECT token FROM app.sandbox_rebuild")
    assert {r["token"] for r in rows} >= {token} and errant not in {r["token"] for r in rows}
    assert "rebuilding" not in up(sandbox).stderr


def test_up_rebuilds_a_subscriber_whose_slot_is_gone(sandbox: Sandbox) -> None:
    sb.stop_instance(sandbox.directory, "pg-subscriber")
    try:
        with psycopg.connect(sandbox.admin_dsn("pg-primary", sb.DRIFT_DATABASE),
                             autocommit=True) as conn:
            wait_for(lambda: conn.execute(
                "SELECT NOT active FROM pg_replication_slots WHERE slot_name = %s",
                (sb.SUBSCRIPTION,)).fetchone() == (True,) or None,
                what="the subscription's slot to be released")
            conn.execute("SELECT pg_drop_replication_slot(%s)", (sb.SUBSCRIPTION,))
    finally:
        proc = up(sandbox)
    assert f"pg-subscriber has no slot {sb.SUBSCRIPTION} on pg-primary" in proc.stderr
    assert "rebuilding it from pg-primary" in proc.stderr
    assert detail(sandbox, "pg-subscriber").endswith("apply worker running)")
    assert "rebuilding" not in up(sandbox).stderr


def test_up_rebuilds_a_replica_whose_sql_thread_failed(sandbox: Sandbox) -> None:
    execute(sandbox, "mariadb-primary",
            "CREATE TABLE IF NOT EXISTS app.sandbox_rebuild_pk (id int PRIMARY KEY)")
    replica_caught_up(sandbox)
    key = uuid.uuid4().int % 1_000_000_000
    # A row only the replica has, kept out of its binlog: no errant GTID, but the primary's
    # insert of the same key stops the SQL thread with a duplicate-key error.
    insert = ("INSERT INTO app.sandbox_rebuild_pk VALUES (%s)", (key,))
    run(sandbox, "mariadb-replica", "SET SESSION sql_log_bin = 0", insert)
    run(sandbox, "mariadb-primary", insert)
    wait_for(lambda: run(sandbox, "mariadb-replica", "SHOW SLAVE STATUS")[0][
        "Slave_SQL_Running"] == "No" or None, what="the SQL thread to stop on the duplicate")
    proc = up(sandbox)
    assert "mariadb-replica SQL thread stopped on error 1062" in proc.stderr, proc.stderr
    assert detail(sandbox, "mariadb-replica").startswith("replicating from mariadb-primary")
    replica_caught_up(sandbox)
    rows = run(sandbox, "mariadb-replica",
               ("SELECT COUNT(*) AS n FROM app.sandbox_rebuild_pk WHERE id = %s", (key,)))
    assert rows[0]["n"] == 1
