"""`dbgauge checksum` fails loud, never false: a half-written chunk row is not a
difference, a replica that stops applying ends the run after a bounded wait (exit 2,
progress lines meanwhile), --format json prints JSON on every exit, a table name with a
newline stays on one report line, and a lock wait under FLUSH TABLES WITH READ LOCK is
called a lock wait.

MariaDB primary -> replica of the sandbox; the tables and databases made here are dropped
at the end, replication is started again in `finally`.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import DBGAUGE, REPO
from tests.helpers.drift import SBR_USER, mariadb_table
from tests.helpers.servers import Sandbox, admin, caught_up, execute, mariadb_account, run

pytestmark = pytest.mark.integration

STATE_HOME = Path(tempfile.gettempdir()) / f"dbgauge-test-state-{os.getuid()}"


def cli(sandbox: Sandbox, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(STATE_HOME)}
    return subprocess.run([*DBGAUGE, "checksum", "--config", str(sandbox.config), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          check=False, env=env)


def sbr_dsn(sandbox: Sandbox) -> str:
    return (f"mysql://{SBR_USER}:sbr-{sandbox.state.dbgauge_password}@127.0.0.1:"
            f"{sandbox.state.port('mariadb-primary')}/")


def doc(proc: subprocess.CompletedProcess[str], code: int) -> dict[str, Any]:
    assert proc.returncode == code, proc.stdout + proc.stderr
    return dict(json.loads(proc.stdout))


def test_half_written_chunk_is_not_a_difference(sandbox: Sandbox, sbr_user: None) -> None:
    with mariadb_table(sandbox, "app.fl_half",
                       "CREATE TABLE app.fl_half (id int PRIMARY KEY, v varchar(20))",
                       "INSERT INTO app.fl_half SELECT seq, 'x' FROM app.seq_1_to_300"):
        replicated = cli(sandbox, "--source", sbr_dsn(sandbox), "--replica",
                         "mariadb-replica", "--method", "replicated", "--tables",
                         "app.fl_half", "--chunk-size", "100", "--whole-table-time", "0",
                         "--format", "json")
        assert doc(replicated, 0)["tables"][0]["chunks"] >= 3
        # what a run stopped between a chunk's REPLACE and its UPDATE leaves behind
        execute(sandbox, "mariadb-primary",
                "UPDATE dbgauge.checksums SET source_crc = NULL, source_cnt = NULL "
                "WHERE db = 'app' AND tbl = 'fl_half' AND chunk = 2")
        caught_up(sandbox)
        assert run(sandbox, "mariadb-replica", "SELECT COUNT(*) AS n FROM dbgauge.checksums "
                   "WHERE tbl = 'fl_half' AND source_crc IS NULL")[0]["n"] == 1
        check = cli(sandbox, "--source", sbr_dsn(sandbox), "--replica", "mariadb-replica",
                    "--replicate-check-only", "--tables", "app.fl_half", "--format", "json")
        table = doc(check, 2)["tables"][0]  # not compared in full: not "ok", never "drift"
        assert table["status"] == "unchecked" and table["differing_chunks"] == {}
        assert "1 half-written chunk(s) on mariadb-replica" in table["reason"]
        assert "--resume" in table["reason"]
        # the chunk written again (what --resume does) makes the table ok once more
        doc(cli(sandbox, "--source", sbr_dsn(sandbox), "--replica", "mariadb-replica",
                "--method", "replicated", "--tables", "app.fl_half", "--chunk-size", "100",
                "--whole-table-time", "0", "--format", "json"), 0)
        caught_up(sandbox)
        assert doc(cli(sandbox, "--source", sbr_dsn(sandbox), "--replica", "mariadb-replica",
                       "--replicate-check-only", "--tables", "app.fl_half", "--format",
                       "json"), 0)["tables"][0]["status"] == "ok"
        execute(sandbox, "mariadb-primary",
                "DELETE FROM dbgauge.checksums WHERE db = 'app' AND tbl = 'fl_half'")


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_connection_error_is_reported_in_the_asked_format(sandbox: Sandbox, fmt: str) -> None:
    wrong = (f"mysql://dbgauge:not-{sandbox.state.dbgauge_password}@127.0.0.1:"
             f"{sandbox.state.port('mariadb-replica')}/")
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", wrong, "--format", fmt)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("dbgauge: error: replica ") and "Traceback" not in proc.stderr
    assert f"not-{sandbox.state.dbgauge_password}" not in proc.stdout + proc.stderr
    if fmt == "json":
        d = json.loads(proc.stdout)
        assert d["status"] == "error" and d["tables"] == []
        assert d["error"] in proc.stderr and "authentication failed" in d["error"]
    else:
        assert proc.stdout == ""


def test_a_table_name_with_a_newline_stays_on_one_report_line(sandbox: Sandbox) -> None:
    execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS fl_scratch",
            "CREATE DATABASE fl_scratch",
            "CREATE TABLE fl_scratch.`odd\nname` (id int PRIMARY KEY, v int)",
            "INSERT INTO fl_scratch.`odd\nname` VALUES (1, 1), (2, 2)")
    try:
        caught_up(sandbox)
        proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
                   "--method", "direct", "--databases", "fl_scratch")
        # dbgauge's identifier quoting refuses such a name: the table is not compared
        # (exit 2, never "no drift"), and its report line stays one line
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        row = [line for line in lines if line.startswith("fl_scratch.")]
        assert len(row) == 1 and row[0].startswith("fl_scratch.odd\\nname ")
        assert row[0].endswith("unchecked")
        assert not any(line.startswith("name") for line in lines)
        assert all(line.startswith(("checksum of", "TABLE", "fl_scratch.", "  ", "1 table"))
                   for line in lines), lines
        d = doc(cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
                    "--method", "direct", "--databases", "fl_scratch", "--format", "json"), 2)
        assert [t["table"] for t in d["tables"]] == ["fl_scratch.odd\nname"]
    finally:
        execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS fl_scratch")
        caught_up(sandbox)


LOCK_USER = "dbgauge_fl"  # the replicated method's privileges, and CREATE on fl_lock


def test_a_lock_wait_under_ftwrl_is_called_a_lock_wait(sandbox: Sandbox, sbr_user: None
                                                       ) -> None:
    password = f"fl-{sandbox.state.dbgauge_password}"
    dsn = (f"mysql://{LOCK_USER}:{password}@127.0.0.1:"
           f"{sandbox.state.port('mariadb-primary')}/")
    args = ("--replica", "mariadb-replica", "--method", "replicated", "--tables",
            "app.fl_lock", "--whole-table-time", "0", "--format", "json")
    with mariadb_table(sandbox, "app.fl_lock",
                       "CREATE TABLE app.fl_lock (id int PRIMARY KEY)",
                       "INSERT INTO app.fl_lock VALUES (1), (2)"), \
            mariadb_account(sandbox, LOCK_USER, password, "SELECT, BINLOG ADMIN, SLAVE MONITOR",
                            "dbgauge", "fl_lock"):
        doc(cli(sandbox, "--source", dsn, *args), 0)  # dbgauge.checksums exists now
        holder = admin(sandbox, "mariadb-primary")
        try:
            holder.cursor().execute("FLUSH TABLES WITH READ LOCK")  # as a backup does
            # creating the replicate table waits for the global read lock ...
            creating = cli(sandbox, "--source", dsn, *args, "--replicate", "fl_lock.checksums")
            # ... and so does writing a chunk into an existing one
            writing = cli(sandbox, "--source", dsn, *args)
        finally:
            holder.close()  # releases the lock
            execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS fl_lock")
            caught_up(sandbox)
    for proc, what in ((creating, "creating fl_lock.checksums"),
                       (writing, "a checksum statement")):
        message = doc(proc, 2)["error"]
        assert message.startswith(f"{what} on source ") and "error 1205" in message
        assert "waited too long for a lock" in message, message
        assert "FLUSH TABLES WITH READ LOCK" in message
        assert "privilege" not in message and "GRANT" not in message
        assert proc.stderr == f"dbgauge: error: {message}\n"
    assert "continue with --resume" in writing.stdout
