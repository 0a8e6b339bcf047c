"""`dbgauge heartbeat update|monitor|check` against the sandbox's MariaDB primary and
replica, with the real pt-heartbeat (Debian percona-toolkit) on the other side: dbgauge
reads a table pt-heartbeat keeps updated, and pt-heartbeat reads the one dbgauge writes.
Lag must grow while the replica's SQL thread is stopped (restarted in `finally`)."""

from __future__ import annotations

import itertools
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbgauge.toolkit.sandbox.model import MONITOR_USER
from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.servers import Sandbox, admin_cnf, caught_up, execute, run

pytestmark = pytest.mark.integration

PT_TABLE = "pt_heartbeat_cli"  # not test_mysql_heartbeat's pt_heartbeat
LINE = re.compile(r"^replica: +(\d+\.\d\d)s \[ .* \]$", re.MULTILINE)


def node(sandbox: Sandbox, name: str) -> str:
    return f"mysql://{MONITOR_USER}@127.0.0.1:{sandbox.state.port(name)}/"


def dbgauge(sandbox: Sandbox, *args: str, timeout: float = 60
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DBGAUGE, "heartbeat", *args, "--password-file",
                           str(sandbox.state.dbgauge_password_file)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def pt_heartbeat(sandbox: Sandbox, tmp_path: Path) -> Iterator[None]:
    """pt-heartbeat --update on the primary, writing dbgauge.pt_heartbeat twice a second."""
    proc = subprocess.Popen(
        ["pt-heartbeat", f"--defaults-file={admin_cnf(sandbox, tmp_path)}", "--update",
         "--utc", "--create-table", "--database", "dbgauge", "--table", PT_TABLE,
         "--interval", "0.5", "-h", "127.0.0.1", "-P", str(sandbox.state.port("mariadb-primary"))],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode in (0, -signal.SIGTERM), out
        execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS dbgauge.{PT_TABLE}")


def test_monitor_and_check_read_pt_heartbeat_and_lag_grows_while_sql_thread_stops(
        sandbox: Sandbox, pt_heartbeat: None) -> None:
    replica = f"replica={node(sandbox, 'mariadb-replica')}"

    def check(*extra: str) -> subprocess.CompletedProcess[str]:
        return dbgauge(sandbox, "check", "--node", replica, "--heartbeat-table",
                       f"dbgauge.{PT_TABLE}", *extra)

    # pt-heartbeat's spelling: a pt DSN, -D/--table, --master-server-id, --utc, and
    # check_postgres' threshold units
    source_id = str(run(sandbox, "mariadb-primary", "SELECT @@server_id AS id")[0]["id"])
    pt_replica = f"replica=h=127.0.0.1,P={sandbox.state.port('mariadb-replica')},u={MONITOR_USER}"
    ok = wait_for(lambda: (c := dbgauge(
        sandbox, "check", "--node", pt_replica, "-D", "dbgauge", "--table", PT_TABLE, "--utc",
        "--master-server-id", source_id, "-w", "3s", "-c", "1 minute")).returncode == 0 and c,
        timeout=30, what="heartbeat check OK on pt-heartbeat's table")
    assert ok.stdout.startswith("LAG OK - replica: lag"), ok.stdout
    other = dbgauge(sandbox, "check", "--node", pt_replica, "-D", "dbgauge", "--table", PT_TABLE,
                    "--master-server-id", "4242")  # no row of that server
    assert other.returncode == 3 and other.stdout.startswith("LAG UNKNOWN"), other.stdout

    steady = dbgauge(sandbox, "monitor", f"{pt_replica},D=dbgauge,t={PT_TABLE}", "--utc",
                     "--interval", "0.5s", "--run-time", "1s")
    assert steady.returncode == 0, steady.stdout + steady.stderr
    lags = [float(x) for x in LINE.findall(steady.stdout)]
    assert len(lags) >= 2 and max(lags) < 3, steady.stdout

    run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
    try:
        stopped = dbgauge(sandbox, "monitor", replica, "--table", PT_TABLE, "--interval",
                          "0.5s", "--run-time", "3s")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        lags = [float(x) for x in LINE.findall(stopped.stdout)]
        assert len(lags) >= 4, stopped.stdout
        # the row no longer moves: every reading is older than the one before
        assert all(b > a for a, b in itertools.pairwise(lags)), stopped.stdout
        # a stopped thread is CRITICAL at once: the lag grows, whatever its age says yet
        crit = check("--warning", "3", "--critical", "60")
        assert crit.returncode == 2 and "[replication-stopped]" in crit.stdout, crit.stdout
        assert "SQL thread stopped: the lag grows (heartbeat " in crit.stdout
    finally:
        run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
    caught_up(sandbox)
    wait_for(lambda: check("--warning", "3", "--critical", "60").returncode == 0,
             timeout=30, what="heartbeat check OK again")


def test_update_writes_a_table_pt_heartbeat_reads(sandbox: Sandbox, tmp_path: Path) -> None:
    table = "hb_cli"
    primary = node(sandbox, "mariadb-primary")
    execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS dbgauge.{table}")
    missing = dbgauge(sandbox, "update", primary, "--table", table)
    assert missing.returncode == 2, missing.stderr
    assert f"heartbeat table dbgauge.{table} does not exist" in missing.stderr
    assert "--create-table" in missing.stderr

    writer = subprocess.Popen(
        [*DBGAUGE, "heartbeat", "update", primary, "--table", table, "--create-table",
         "--interval", "200ms", "--password-file", str(sandbox.state.dbgauge_password_file)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cnf = admin_cnf(sandbox, tmp_path)
    try:
        def pt_check() -> float | None:
            proc = subprocess.run(
                ["pt-heartbeat", f"--defaults-file={cnf}", "--check", "--utc", "--database",
                 "dbgauge", "--table", table, "--master-server-id", "1", "-h", "127.0.0.1",
                 "-P", str(sandbox.state.port("mariadb-replica"))],
                capture_output=True, text=True, timeout=30, check=False)
            text = proc.stdout.strip()
            return float(text) if proc.returncode == 0 and re.fullmatch(r"\d+\.\d+", text) \
                else None

        lag = wait_for(lambda: (v := pt_check()) is not None and v < 2 and v, timeout=30,
                       what="pt-heartbeat --check reading dbgauge's row")
        assert 0 <= lag < 2
        assert writer.poll() is None  # still running in the foreground
    finally:
        writer.send_signal(signal.SIGTERM)
        try:
            _, err = writer.communicate(timeout=15)
        finally:
            writer.kill()  # never left running for the next test, whatever happened
            execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS dbgauge.{table}")
    assert writer.returncode == 0, err
    assert sandbox.state.dbgauge_password not in err
