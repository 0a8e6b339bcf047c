"""Heartbeat lag against the real sandbox: the daemon's writer on the primary, the collector
on the replica (as the monitoring user), pt-heartbeat interoperability both ways, and a
writer that outlives a primary restart."""

from __future__ import annotations

import logging
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from dbgauge.app import parse_config, registry
from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.exporter.scrape import TargetRunner
from dbgauge.toolkit.heartbeat import HeartbeatWriter
from tests.helpers import Metrics, parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon, config_file, scraper, target_config, target_entry
from tests.helpers.servers import Sandbox, admin_cnf, replica_caught_up, run

pytestmark = pytest.mark.integration


def _lag(m: Metrics, target: str) -> float | None:
    return value(m, "dbgauge_mysql_heartbeat_lag_seconds", target=target)


def test_heartbeat_lag_grows_while_the_sql_thread_is_stopped(sandbox: Sandbox,
                                                            tmp_path: Path) -> None:
    primary = target_entry(sandbox, "mariadb-primary")
    primary["heartbeat"] = {"mode": "write", "interval": 0.25}
    replica = target_entry(sandbox, "mariadb-replica")
    replica["heartbeat"] = {"mode": "read"}
    run(sandbox, "mariadb-primary", "CREATE TABLE IF NOT EXISTS app.dbgauge_hb_load "
        "(id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")
    d = Daemon(config_file(sandbox, tmp_path / "c.yaml", [primary, replica]), tmp_path / "log")
    stopped = False
    try:
        def fresh() -> Metrics | None:
            m = d.metrics()
            lag = _lag(m, "mariadb-replica")
            return m if lag is not None and lag < 1 else None

        m = wait_for(fresh)
        assert value(m, "dbgauge_mysql_heartbeat_configured", target="mariadb-replica") == 1
        assert value(m, "dbgauge_mysql_heartbeat_source_server_id", target="mariadb-replica") == 1
        assert (_lag(m, "mariadb-primary") or 99) < 1  # the writer's own row is fresh
        stored = value(m, "dbgauge_mysql_heartbeat_stored_timestamp_seconds",
                       target="mariadb-replica")
        now = value(m, "dbgauge_mysql_heartbeat_now_timestamp_seconds", target="mariadb-replica")
        assert stored is not None and now is not None
        assert _lag(m, "mariadb-replica") == pytest.approx(now - stored)
        _, body = d.get("/metrics")
        proc = subprocess.run(["promtool", "check", "metrics"], input=body, text=True,
                              capture_output=True, timeout=30, check=False)
        assert proc.returncode == 0 and not (proc.stdout + proc.stderr).strip(), proc.stdout

        run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
        stopped = True
        for i in range(50):  # 50 separate transactions on the primary
            run(sandbox, "mariadb-primary", ("INSERT INTO app.dbgauge_hb_load (v) VALUES (%s)",
                                             (i,)))

        def lagging() -> Metrics | None:
            m = d.metrics()
            lag = _lag(m, "mariadb-replica") or 0
            return m if lag > 1 else None

        m = wait_for(lagging)
        channel = {"target": "mariadb-replica", "channel": ""}
        assert value(m, "dbgauge_mysql_replica_sql_running", **channel) == 0
        assert value(m, "dbgauge_mysql_replica_io_running", **channel) == 1
        assert value(m, "dbgauge_mysql_replica_seconds_behind_source_unknown", **channel) == 1
        assert value(m, "dbgauge_mysql_replica_seconds_behind_source", **channel) is None
        assert (value(m, "dbgauge_mysql_replica_gtid_pending_transactions", **channel) or 0) >= 50
        first = _lag(m, "mariadb-replica") or 0
        wait_for(lambda: (_lag(d.metrics(), "mariadb-replica") or 0) > first,
                 what="the lag to keep growing")

        run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
        stopped = False
        m = wait_for(fresh)
        assert value(m, "dbgauge_mysql_replica_sql_running", **channel) == 1
    finally:
        if stopped:
            run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
        d.stop()
    assert "heartbeat writer for mariadb-primary started" in d.log_text()


def test_reads_a_table_pt_heartbeat_writes(sandbox: Sandbox, tmp_path: Path) -> None:
    cnf = admin_cnf(sandbox, tmp_path)
    writer = subprocess.Popen(
        ["pt-heartbeat", f"--defaults-file={cnf}", "--host=127.0.0.1",
         f"--port={sandbox.state.port('mariadb-primary')}", "--database=dbgauge",
         "--table=pt_heartbeat", "--create-table", "--update", "--utc", "--interval=0.2",
         "--run-time=30"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with scraper(sandbox, "mariadb-replica",
                     heartbeat={"mode": "read", "table": "dbgauge.pt_heartbeat"}) as scrape:
            def fresh() -> Metrics | None:
                assert writer.poll() is None, writer.communicate()[0]
                try:
                    m = scrape({"mysql_heartbeat"})
                except AssertionError:  # table or row not replicated yet
                    return None
                lag = value(m, "dbgauge_mysql_heartbeat_lag_seconds")
                return m if lag is not None and lag < 1 else None

            m = wait_for(fresh, timeout=20)
        assert value(m, "dbgauge_mysql_heartbeat_source_server_id") == 1
    finally:
        writer.terminate()
        writer.wait(10)
        run(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS dbgauge.pt_heartbeat")


def test_pt_heartbeat_check_reads_dbgauges_table(sandbox: Sandbox, tmp_path: Path) -> None:
    writer = HeartbeatWriter(target_config(sandbox, "mariadb-primary",
                                           heartbeat={"mode": "write", "interval": 0.2}))
    writer.start()
    try:
        wait_for(lambda: True if writer.writes >= 3 else None)
        replica_caught_up(sandbox)
        out = subprocess.run(
            ["pt-heartbeat", f"--defaults-file={admin_cnf(sandbox, tmp_path)}",
             "--host=127.0.0.1",
             f"--port={sandbox.state.port('mariadb-replica')}", "--database=dbgauge",
             "--table=heartbeat", "--master-server-id=1", "--utc", "--check"],
            capture_output=True, text=True, timeout=30, check=False)
    finally:
        writer.stop()
    assert out.returncode == 0, out.stdout + out.stderr
    assert 0 <= float(out.stdout.strip()) < 2


def test_writer_survives_a_primary_restart(sandbox: Sandbox, caplog: pytest.LogCaptureFixture,
                                           daemon: Daemon) -> None:
    writer = HeartbeatWriter(target_config(sandbox, "mariadb-primary",
                                           heartbeat={"mode": "write", "interval": 0.2}))
    with caplog.at_level(logging.INFO, logger="dbgauge.heartbeat"):
        writer.start()
        try:
            wait_for(lambda: True if writer.writes >= 2 else None)
            sb.stop_instance(sandbox.directory, "mariadb-primary")
            try:
                stalled = writer.writes
                wait_for(lambda: writer.failed >= 2, what="failed attempts while it is down")
                assert writer.writes == stalled
            finally:
                sb.start_instance(sandbox.directory, "mariadb-primary")
            wait_for(lambda: True if writer.writes >= stalled + 3 else None, timeout=30)
            assert writer.running
        finally:
            writer.stop()
    messages = [r.getMessage() for r in caplog.records]
    failures = [msg for msg in messages if "cannot write" in msg]
    assert failures, messages
    assert max(Counter(failures).values()) == 1, failures  # each distinct failure logged once
    assert any("is writing again" in msg for msg in messages), messages
    # leave the sandbox as found: replication running, the session daemon's primary up again
    wait_for(lambda: True if run(sandbox, "mariadb-replica", "SHOW SLAVE STATUS")[0][
        "Slave_IO_Running"] == "Yes" else None, timeout=30)
    replica_caught_up(sandbox)
    wait_for(lambda: True if value(parse_metrics(daemon.get("/metrics")[1]), "dbgauge_up",
                               target="mariadb-primary") == 1 else None, timeout=30)


@pytest.mark.parametrize(("heartbeat", "error"), [
    ({"mode": "read", "table": "dbgauge.no_such_heartbeat"},
     "heartbeat table dbgauge.no_such_heartbeat does not exist on this server"),
    ({"mode": "read", "source_server_id": 99}, "no heartbeat row from server_id 99"),
])
def test_missing_table_or_row_fails_the_collector_with_a_reason(
        sandbox: Sandbox, heartbeat: dict[str, object], error: str) -> None:
    writer = HeartbeatWriter(target_config(sandbox, "mariadb-primary",
                                           heartbeat={"mode": "write", "interval": 0.2}))
    writer.start()  # so dbgauge.heartbeat exists and holds server 1's row
    try:
        wait_for(lambda: True if writer.writes >= 1 else None)
        replica_caught_up(sandbox)
    finally:
        writer.stop()
    target = target_config(sandbox, "mariadb-replica", heartbeat=heartbeat)
    runner = TargetRunner(target, registry().for_target(target))
    try:
        result = runner.scrape(time.monotonic() + 8, {"mysql_heartbeat"})
    finally:
        runner.close()
    assert result.up
    (run_,) = result.collectors
    assert not run_.success and error in (run_.error or ""), run_.error


def test_writer_to_a_closed_port_logs_once_and_stops_promptly(
        caplog: pytest.LogCaptureFixture) -> None:
    """Nothing listens on port 1: the writer keeps retrying, logs the failure once, and
    stop() ends its thread (stop() gives up on a thread after its own 5 s)."""
    target = parse_config("targets:\n  - name: t\n    kind: mysql\n"
                          "    dsn: mysql://u@127.0.0.1:1/\n"
                          "    heartbeat: {mode: write, interval: 0.05}\n").all_targets()[0]
    writer = HeartbeatWriter(target)
    with caplog.at_level(logging.WARNING, logger="dbgauge.heartbeat"):
        writer.start()
        wait_for(lambda: writer.failed >= 3, what="three failed attempts")
        assert writer.running
        writer.stop()
        assert not writer.running
    failures = [r for r in caplog.records if "cannot write" in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in caplog.records]
    assert "127.0.0.1:1" in failures[0].getMessage()
    assert writer.writes == 0
