"""`dbgauge check` health checks against the real sandbox, run as the CLI runs them (a
subprocess, as Nagios/Icinga would), with the least-privilege `dbgauge` user of the
sandbox config. Every test restores what it breaks (replication threads, stopped
servers, lock holders, pool clients) in a `finally` block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbgauge.toolkit import sandbox as sb
from tests.helpers import free_port, wait_for
from tests.helpers.daemon import cfg, check, heartbeat
from tests.helpers.servers import Sandbox, lock_wait, run, waiting_pgbouncer_client

pytestmark = pytest.mark.integration

CHECKS = ("split-brain", "replication", "lag", "connections", "pgbouncer-pools", "locks")










def test_clean_sandbox_every_check_is_ok(sandbox: Sandbox) -> None:
    with heartbeat(sandbox):
        wait_for(lambda: True if check("lag", *cfg(sandbox)).code == 0 else None)
        for name in CHECKS:
            got = check(name, *cfg(sandbox))
            assert got.code == 0, got.out + got.err
            assert got.first.startswith(f"{name.upper()} OK - "), got.out
            assert "\n" not in got.out.rstrip("\n"), got.out  # no findings listed
        doc = check("lag", *cfg(sandbox, "--format", "json")).json()
        assert doc["status"] == "OK" and doc["findings"] == []
        assert "mariadb-replica: lag" in str(doc["summary"])
        assert "(heartbeat of server_id 1)" in str(doc["summary"])
        assert "pg-standby: lag" in str(doc["summary"])


def test_stopped_sql_thread_is_critical_then_ok(sandbox: Sandbox) -> None:
    run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
    try:
        got = check("replication", *cfg(sandbox, "--target", "mariadb-replica"))
        assert got.code == 2, got.out
        assert got.first.startswith("REPLICATION CRITICAL - mariadb-replica: replication: "
                                    "SQL thread stopped")
        assert "CRITICAL mariadb-replica [sql-thread-stopped]" in got.out
        # Without a heartbeat, Seconds_Behind_Master is NULL: the lag is unknown, CRITICAL.
        got = check("lag", "--node", sandbox.admin_dsn("mariadb-replica"))
        assert got.code == 2 and "[lag-unknown]" in got.out, got.out
        assert sandbox.state.mariadb.admin_password not in got.out
    finally:
        run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
    got = check("replication", *cfg(sandbox, "--target", "mariadb-replica"))
    assert got.code == 0, got.out


def test_lag_above_thresholds_is_warning_then_critical(sandbox: Sandbox) -> None:
    """A replica 3 s behind on purpose (MASTER_DELAY: the threads run, the SQL thread
    waits): the heartbeat's age is its lag (a stopped thread would be CRITICAL at once,
    tests/integration/test_mysql_lag.py)."""
    with heartbeat(sandbox):
        target = cfg(sandbox, "--target", "mariadb-replica")
        wait_for(lambda: True if check("lag", *target).code == 0 else None)
        run(sandbox, "mariadb-replica", "STOP SLAVE", "CHANGE MASTER TO MASTER_DELAY = 3",
            "START SLAVE")
        try:
            got = wait_for(lambda: (lambda o: o if o.code == 1 else None)(
                check("lag", *target, "--warning", "1.5", "--critical", "600")))
            assert got.first.startswith("LAG WARNING - mariadb-replica: lag ")
            assert "(threshold 1.5)" in got.first
            assert "'mariadb-replica:lag_seconds'=" in got.first and ";1.5;600" in got.first
            got = check("lag", *target, "--warning", "0.5", "--critical", "1")
            assert got.code == 2 and got.first.startswith("LAG CRITICAL - "), got.out
            doc = check("lag", *target, "--critical", "1", "--format", "json").json()
            assert doc["status"] == "CRITICAL"
            (finding,) = doc["findings"]  # type: ignore[misc]
            assert finding["node"] == "mariadb-replica" and finding["kind"] == "lag"
        finally:
            run(sandbox, "mariadb-replica", "STOP SLAVE", "CHANGE MASTER TO MASTER_DELAY = 0",
                "START SLAVE")
        wait_for(lambda: True if check("lag", *target, "--warning", "1").code == 0 else None,
                 timeout=30)


def test_a_node_that_is_down_is_critical_naming_it_and_why(sandbox: Sandbox) -> None:
    """Down is CRITICAL, as check_postgres, check_pgsql and check_mysql say it; UNKNOWN
    only when asked (--unreachable-state unknown); the other nodes are still checked."""
    closed = free_port()
    nodes = ["--node", f"mysql://dbgauge:notmypw99@127.0.0.1:{closed}/",
             "--node", "standby=" + sandbox.state.dbgauge_dsn("pg-standby"),
             "--password-file", str(sandbox.state.dbgauge_password_file)]
    got = check("connections", *nodes)
    assert got.code == 2, got.out
    assert got.first.startswith(f"CONNECTIONS CRITICAL - 127.0.0.1:{closed}: cannot connect "
                                f"to 127.0.0.1:{closed}: ")
    assert "standby: 1 of" in got.first or "standby: 2 of" in got.first  # still checked
    assert "notmypw99" not in got.out + got.err
    got = check("connections", *nodes, "--unreachable-state", "unknown")
    assert got.code == 3 and got.first.startswith("CONNECTIONS UNKNOWN - 127.0.0.1:"), got.out
    got = check("connection", *nodes)
    assert got.code == 2, got.out
    assert f"CRITICAL 127.0.0.1:{closed} [unreachable] cannot connect to" in got.out
    assert re.search(rf"standby: connected in \d+\.\d{{3}} s, postgres "
                     rf"{sandbox.state.pg_version}\.", got.first), got.out
    sb.stop_instance(sandbox.directory, "mariadb-replica")
    try:
        for name in ("split-brain", "lag", "replication", "connection"):
            got = check(name, *cfg(sandbox))
            assert got.code == 2, got.out
            assert f"CRITICAL mariadb-replica [unreachable] cannot connect to 127.0.0.1:" \
                   f"{sandbox.state.port('mariadb-replica')}: " in got.out, got.out
        got = check("split-brain", *cfg(sandbox), "--unreachable-state", "unknown")
        assert got.code == 3 and "UNKNOWN mariadb-replica [unreachable]" in got.out, got.out
    finally:
        sb.start_instance(sandbox.directory, "mariadb-replica")
    assert check("replication", *cfg(sandbox)).code == 0


def test_the_connection_check(sandbox: Sandbox, tmp_path: Path) -> None:
    """Every kind answers with what it is and how long connecting took (perfdata, held
    against -w/-c as check_pgsql does); a refused password is CRITICAL [auth-failed]."""
    names = ("mariadb-primary", "mariadb-replica", "pg-primary", "pg-standby", "pgbouncer",
             "pg-subscriber")
    got = check("connection", *cfg(sandbox), "-v")
    assert got.code == 0, got.out
    took = {}
    for name in names:
        found = re.search(rf"{name}: connected in (\d+\.\d+) s, ", got.first)
        assert found, got.out
        took[name] = float(found.group(1))
        perf = re.search(rf"'{name}:connect_seconds'=([\d.e-]+)s;2;8", got.first)
        assert perf and abs(float(perf.group(1)) - took[name]) < 0.001, got.out
    assert "pgbouncer: connected in " in got.first and ", pgbouncer 1." in got.first, got.out
    # a connect can never be this fast: every node over the warning, none over critical
    got = check("connection", *cfg(sandbox), "-w", "0.000001", "-c", "30s")
    assert got.code == 1 and got.first.startswith("CONNECTION WARNING - "), got.out
    assert all(f"WARNING {name} [slow-connect] connected in " in got.out for name in names)
    wrong = tmp_path / "wrong.password"
    wrong.write_text("not-the-password-4711\n")
    got = check("connection", "--node", "p=" + sandbox.state.dbgauge_dsn("pg-primary"),
                "--password-file", str(wrong))
    assert got.code == 2 and "CRITICAL p [auth-failed] authentication failed" in got.out
    got = check("connection", "--node", "p=" + sandbox.state.dbgauge_dsn("pg-primary"),
                "--password-file", str(wrong), "--unreachable-state", "unknown")
    assert got.code == 3 and "UNKNOWN p [auth-failed]" in got.out, got.out


def test_connections_locks_and_pool_waits_by_threshold(sandbox: Sandbox) -> None:
    got = check("connections", *cfg(sandbox, "--target", "pg-primary", "--warning", "0.1%",
                                    "--critical", "99%"))
    assert got.code == 1 and "WARNING pg-primary [connections]" in got.out, got.out
    with lock_wait(sandbox) as waiting:
        got = wait_for(lambda: (lambda g: g if g.code == 1 else None)(
            check("locks", *cfg(sandbox, "--target", "pg-primary", "--warning", "1"))),
            what="the lock wait to reach the 1 s warning")
        assert "oldest lock wait" in got.first and "1 waiting, 1 root blocker" in got.first
        assert waiting.is_alive()
    with waiting_pgbouncer_client(sandbox):
        got = wait_for(lambda: (lambda g: g if g.code == 2 else None)(
            check("pgbouncer-pools", *cfg(sandbox, "--critical", "1"))),
            what="the queued client to wait past the 1 s critical")
        assert f"pool {sb.TINY_POOL_DATABASE}/sandbox_admin (1 waiting)" in got.first
    assert check("pgbouncer-pools", *cfg(sandbox)).code == 0


def test_check_applies_only_to_its_kinds(sandbox: Sandbox, tmp_path: Path) -> None:
    got = check("pgbouncer-pools", *cfg(sandbox, "--target", "pg-primary"))
    assert got.code == 3 and "[not-applicable]" in got.out, got.out
    got = check("pgbouncer-pools", *cfg(sandbox))  # configured non-PgBouncer targets skipped
    assert got.code == 0 and got.first.startswith("PGBOUNCER-POOLS OK - pgbouncer: ")


def test_an_unreachable_node_is_critical_and_named_without_its_password() -> None:
    """Nothing listens on port 1: CRITICAL (exit 2), the node named by its address."""
    out = check("lag", "--node", "mysql://u:pw123456@127.0.0.1:1/", "--format", "json")
    assert out.code == 2, out.out + out.err
    doc = out.json()
    assert doc["status"] == "CRITICAL"
    (finding,) = doc["findings"]  # type: ignore[misc]
    assert finding["kind"] == "unreachable" and finding["node"] == "127.0.0.1:1"
    assert "cannot connect to 127.0.0.1:1" in finding["detail"]
    assert "pw123456" not in out.out + out.err
