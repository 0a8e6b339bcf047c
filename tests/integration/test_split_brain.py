"""Split-brain against the real sandbox: an errant write on the MariaDB replica (found with
its exact GTID, then reconciled), a promoted PostgreSQL standby (two primaries, then the
standby is rebuilt), two heartbeat writers, and the daemon's scheduled check. The shared
sandbox is restored in `finally` blocks: read_only back on, the replica's binlog reset to
drop the errant GTID, the standby re-cloned and streaming."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import psycopg
import pytest
import yaml

from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.gtid import parse_mariadb_gtids
from dbgauge.toolkit.heartbeat import format_ts
from tests.helpers import value, wait_for
from tests.helpers.daemon import Daemon, cfg, check, heartbeat
from tests.helpers.servers import (
    ERRANT_INSERT,
    Sandbox,
    documented_grants,
    errant_write,
    run,
)

pytestmark = pytest.mark.integration



def _seq_by_domain(position: str) -> dict[int, int]:
    """A MariaDB GTID position ('domain-server_id-seq,...') -> the highest seq by domain."""
    out: dict[int, int] = {}
    for g in parse_mariadb_gtids(position):
        out[g.domain] = max(out.get(g.domain, 0), g.seq)
    return out


def caught_up(sandbox: Sandbox) -> None:
    """Until the replica has applied at least what the primary had binlogged when asked
    (>=, not ==: the primary's heartbeat writer keeps adding transactions)."""
    primary = _seq_by_domain(str(run(sandbox, "mariadb-primary",
                                     "SELECT @@gtid_binlog_pos AS p")[0]["p"]))

    def applied() -> bool:
        replica = _seq_by_domain(str(run(sandbox, "mariadb-replica",
                                         "SELECT @@gtid_slave_pos AS p")[0]["p"]))
        return all(replica.get(d, -1) >= seq for d, seq in primary.items())

    wait_for(applied, timeout=30, what="the replica to catch up")


def daemon_config(sandbox: Sandbox, path: Path) -> Path:
    data = yaml.safe_load(sandbox.config.read_text())
    data["checks"] = [{"check": "split-brain", "interval": "1s"},
                      {"check": "replication", "interval": "1s"}]
    path.write_text(yaml.safe_dump(data))
    return path


def test_errant_write_on_the_mariadb_replica_then_reconciled(sandbox: Sandbox,
                                                             tmp_path: Path) -> None:
    # A user with exactly the grants of docs/mysql.md (created on the primary: replicated).
    user, password = "dbgauge_sb_documented", "Docs-grants-9q"
    (tmp_path / "pw").write_text(password)
    run(sandbox, "mariadb-primary", ("DROP USER IF EXISTS %s@'%%'", (user,)),
        *documented_grants("mariadb", user, password))
    caught_up(sandbox)
    documented = [f"{name}=mysql://{user}@127.0.0.1:{sandbox.state.port(name)}/"
                  for name in ("mariadb-primary", "mariadb-replica")]
    d = Daemon(daemon_config(sandbox, tmp_path / "c.yaml"), tmp_path / "serve.log")
    try:
        with errant_write(sandbox) as gtid:
            got = check("split-brain", *cfg(sandbox))
            assert got.code == 2, got.out
            assert got.first.startswith(
                f"SPLIT-BRAIN CRITICAL - mariadb-replica: 1 errant transaction(s) its source "
                f"mariadb-primary does not have: {gtid}"), got.out
            doc = check("split-brain", *cfg(sandbox, "--format", "json")).json()
            findings = {(f["kind"], f["node"]): f for f in doc["findings"]}  # type: ignore
            errant = findings[("errant-transactions", "mariadb-replica")]
            assert errant["severity"] == "CRITICAL"
            assert errant["evidence"]["errant_gtids"] == gtid
            assert errant["evidence"]["written_by"].endswith("= this replica")
            assert errant["evidence"]["first_errant_summary"] == \
                ERRANT_INSERT % ("1", "'written on the replica'")
            assert errant["evidence"]["first_errant_event"].startswith("mariadb-bin.")
            assert "RESET MASTER" in errant["fix"]
            assert findings[("writable-replica", "mariadb-replica")]["severity"] == "WARNING"
            # Only the replica given, no source to compare with: its local write still shows.
            got = check("split-brain", *cfg(sandbox, "--targets", "mariadb-replica"))
            assert got.code == 2 and "local write(s) not in its gtid_slave_pos" in got.out
            assert gtid in got.first
            # The daemon's scheduled check says the same, cached, without GTIDs in labels.
            m = wait_for(lambda: (lambda m: m if value(
                m, "dbgauge_check_status", check="split-brain", target="mariadb-replica") == 2
                else None)(d.metrics()), timeout=20)
            assert value(m, "dbgauge_split_brain_findings", kind="errant-transactions",
                         node="mariadb-replica") == 1
            assert value(m, "dbgauge_split_brain_errant_transactions",
                         node="mariadb-replica") == 1
            assert value(m, "dbgauge_check_status", check="split-brain",
                         target="mariadb-primary") == 0
            assert gtid not in d.get("/metrics")[1]
            # The documented grants find it too, with the binlog evidence (BINLOG MONITOR).
            doc = check("split-brain", "--node", documented[0], "--node", documented[1],
                        "--password-file", str(tmp_path / "pw"), "--format", "json").json()
            assert doc["status"] == "CRITICAL"
            (errant,) = [f for f in doc["findings"]  # type: ignore[attr-defined]
                         if f["kind"] == "errant-transactions"]
            assert errant["node"] == "mariadb-replica" and gtid in errant["detail"]
            assert errant["evidence"]["first_errant_event"].startswith("mariadb-bin.")
        got = check("split-brain", *cfg(sandbox))
        assert got.code == 0 and got.first.startswith("SPLIT-BRAIN OK - "), got.out
        m = wait_for(lambda: (lambda m: m if value(
            m, "dbgauge_check_status", check="split-brain", target="mariadb-replica") == 0
            else None)(d.metrics()), timeout=20)
        assert value(m, "dbgauge_check_status", check="replication", target="pg-standby") == 0
        assert value(m, "dbgauge_job_success", dbgauge_job="check:split-brain") == 1
        _, body = d.get("/metrics")
        proc = subprocess.run(["promtool", "check", "metrics"], input=body, text=True,
                              capture_output=True, timeout=30, check=False)
        assert proc.returncode == 0 and not (proc.stdout + proc.stderr).strip(), proc.stdout
        assert "# HELP dbgauge_check_status" in body and "cached" in body
    finally:
        d.stop()
        run(sandbox, "mariadb-primary", ("DROP USER IF EXISTS %s@'%%'", (user,)))
        caught_up(sandbox)


def test_promoted_standby_is_a_second_primary_until_rebuilt(sandbox: Sandbox) -> None:
    try:
        with psycopg.connect(sandbox.admin_dsn("pg-standby"), autocommit=True) as conn:
            assert conn.execute("SELECT pg_promote(true, 30)").fetchone() == (True,)
        got = check("split-brain", *cfg(sandbox))
        assert got.code == 2, got.out
        assert "CRITICAL pg-standby [multiple-primaries] not in recovery, like pg-primary " \
               "(timeline 1): 2 primaries of system identifier" in got.out, got.out
        assert "CRITICAL pg-primary [multiple-primaries] not in recovery, like pg-standby " \
               "(timeline 2)" in got.out
        assert "pg_rewind" in got.out
    finally:
        sb.rebuild_instance(sandbox.directory, "pg-standby")
    got = check("split-brain", *cfg(sandbox))
    assert got.code == 0, got.out
    got = check("replication", *cfg(sandbox, "--targets", "pg-primary,pg-standby"))
    assert got.code == 0 and "pg-standby: standby, streaming" in got.first, got.out


def test_two_heartbeat_writers_advancing(sandbox: Sandbox) -> None:
    stop = threading.Event()

    def impostor() -> None:  # a second writer, as a demoted primary's pt-heartbeat would be
        while not stop.is_set():
            run(sandbox, "mariadb-primary",
                ("REPLACE INTO dbgauge.heartbeat (ts, server_id) VALUES (%s, 99)",
                 (format_ts(time.time()),)))
            stop.wait(0.2)

    with heartbeat(sandbox):
        wait_for(lambda: True if run(sandbox, "mariadb-primary",
                                 "SELECT COUNT(*) AS n FROM dbgauge.heartbeat")[0]["n"]
             else None)
        thread = threading.Thread(target=impostor, daemon=True)
        thread.start()
        try:
            got = check("split-brain", *cfg(sandbox, "--heartbeat-wait", "1"))
            assert got.code == 2, got.out
            assert "CRITICAL mariadb-primary [concurrent-heartbeat-writers] heartbeat rows of " \
                   "server_id 1 (mariadb-primary), 99 are all advancing" in got.out, got.out
        finally:
            stop.set()
            thread.join(10)
            run(sandbox, "mariadb-primary", "DELETE FROM dbgauge.heartbeat WHERE server_id = 99")
        got = check("split-brain", *cfg(sandbox, "--heartbeat-wait", "1"))
        assert got.code == 0, got.out
