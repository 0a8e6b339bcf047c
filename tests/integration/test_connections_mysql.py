"""MySQL connections as the mysql client takes them, against the sandbox's MariaDB: a
check with nothing but --defaults-file, ~/.my.cnf filling what a DSN leaves out, a DSN's
read_default_file=, and which password wins. Run as subprocesses with HOME pointed at a
temporary directory, so no option file of the machine's user takes part."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dbgauge.toolkit.sandbox.model import MONITOR_USER
from tests.helpers import DBGAUGE, REPO
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration


def dbgauge(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([*DBGAUGE, *args], env=env, cwd=home, capture_output=True,
                          text=True, timeout=120, check=False)


def test_a_check_with_only_a_defaults_file(sandbox: Sandbox, tmp_path: Path) -> None:
    port = sandbox.state.port("mariadb-primary")
    # The password in an included file, as /etc/mysql/my.cnf includes conf.d/.
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "secret.cnf").write_text(
        f"[client]\npassword = \"{sandbox.state.dbgauge_password}\"\n")
    (tmp_path / "conf.d" / "ignored.txt").write_text("[client]\nuser = nobody\n")
    cnf = tmp_path / "dbgauge.cnf"
    cnf.write_text(f"[mysql]\nuser = not-this-one\n[client]\nuser = {MONITOR_USER}\n"
                   f"host = 127.0.0.1\nport = {port}\n!includedir {tmp_path / 'conf.d'}\n")
    got = dbgauge(tmp_path, "check", "connections", "--defaults-file", str(cnf))
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith(f"CONNECTIONS OK - 127.0.0.1:{port}: "), got.stdout
    assert sandbox.state.dbgauge_password not in got.stdout + got.stderr

    # The same file named in a DSN; --node DSNs under --defaults-file read it too.
    replica = sandbox.state.port("mariadb-replica")
    got = dbgauge(tmp_path, "check", "replication",
                  "--node", f"replica=mysql://127.0.0.1:{replica}/?read_default_file={cnf}")
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith("REPLICATION OK - replica: "), got.stdout
    got = dbgauge(tmp_path, "check", "replication", "--defaults-file", str(cnf),
                  "--node", f"replica=mysql://127.0.0.1:{replica}/")
    assert got.returncode == 0, got.stdout + got.stderr


def test_home_my_cnf_fills_what_the_dsn_leaves_out(sandbox: Sandbox, tmp_path: Path) -> None:
    port = sandbox.state.port("mariadb-replica")
    (tmp_path / ".my.cnf").write_text(
        f"[client]\nuser = {MONITOR_USER}\npassword = {sandbox.state.dbgauge_password}\n")
    got = dbgauge(tmp_path, "check", "replication", "--node", f"mysql://127.0.0.1:{port}/")
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.startswith(f"REPLICATION OK - 127.0.0.1:{port}: "), got.stdout


def test_password_file_wins_over_the_option_file(sandbox: Sandbox, tmp_path: Path) -> None:
    port = sandbox.state.port("mariadb-primary")
    wrong = "stale-secret-2024"
    (tmp_path / ".my.cnf").write_text(f"[client]\nuser = {MONITOR_USER}\npassword = {wrong}\n"
                                      f"host = 127.0.0.1\nport = {port}\n")
    refused = dbgauge(tmp_path, "check", "connections", "--node", "mysql://")
    assert refused.returncode == 2, refused.stdout  # down for the monitor: CRITICAL
    assert "authentication failed" in refused.stdout, refused.stdout
    assert wrong not in refused.stdout + refused.stderr
    fixed = dbgauge(tmp_path, "check", "connections", "--node", "mysql://",
                    "--password-file", str(sandbox.state.dbgauge_password_file))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
