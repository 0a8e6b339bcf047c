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
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from dbgauge.toolkit.sandbox.layout import Layout
from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.drift import SBR_USER, STATE_HOME, mariadb_table
from tests.helpers.servers import (
    Sandbox,
    admin,
    caught_up,
    execute,
    mariadb_account,
    pg_admin,
    replica_caught_up,
    replicating,
    run,
    stopped,
)

pytestmark = pytest.mark.integration



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


# ----------------------------------------------------------------- a replica that stops

BIG = "app.fl_big"  # chunks enough (--chunk-size 50) that the run is still going when stopped
WAIT = "3s"  # --max-wait of these runs: how long a stopped replica is waited for


@pytest.fixture(scope="module")
def big_table(sandbox: Sandbox) -> Iterator[None]:
    with mariadb_table(sandbox, BIG, f"CREATE TABLE {BIG} (id int PRIMARY KEY, v char(32))",
                       f"INSERT INTO {BIG} SELECT seq, md5(seq) "  # noqa: S608
                       "FROM app.seq_1_to_200000"):
        yield
    execute(sandbox, "mariadb-primary", "DELETE FROM dbgauge.checksums WHERE tbl = 'fl_big'")


class Running:
    """A `dbgauge checksum` of a big table in the background (by default BIG, replicated),
    its stderr read as it comes (progress lines every 0.2 s)."""

    def __init__(self, sandbox: Sandbox, *args: str) -> None:
        env = {**os.environ, "XDG_STATE_HOME": str(STATE_HOME)}
        args = args or ("--source", sbr_dsn(sandbox), "--replica", "mariadb-replica",
                        "--method", "replicated", "--tables", BIG, "--chunk-size", "50")
        self.proc = subprocess.Popen(
            [*DBGAUGE, "checksum", "--config", str(sandbox.config), *args,
             "--whole-table-time", "0", "--max-wait", WAIT, "--progress", "time,0.2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert self.proc.stderr is not None
        threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line)

    def line(self, timeout: float = 60) -> str:
        """The next line on stderr."""
        got = self.lines.get(timeout=timeout)
        self.seen.append(got)
        return got

    def started(self) -> None:
        """Until the walk has begun (its first progress line)."""
        while "% done" not in self.line():
            pass

    def end(self, timeout: float = 60) -> tuple[int, list[str], float]:
        """Exit status, every stderr line, seconds it took from now."""
        began = time.monotonic()
        code = self.proc.wait(timeout)
        took = time.monotonic() - began
        while True:
            try:
                self.line(timeout=5)
            except queue.Empty:
                break
        return code, self.seen, took


@contextmanager
def running(sandbox: Sandbox, *args: str) -> Iterator[Running]:
    run_ = Running(sandbox, *args)
    try:
        yield run_
    finally:
        if run_.proc.poll() is None:
            run_.proc.kill()
        run_.proc.wait(30)


def after(lines: list[str], marker: int) -> list[str]:
    """The progress lines printed while the run waited."""
    return [x for x in lines[marker:] if "waiting: no progress for" in x]


def test_a_replica_that_stops_answering_ends_the_run(sandbox: Sandbox, sbr_user: None,
                                                     big_table: None) -> None:
    with running(sandbox) as r:
        r.started()
        with stopped(sandbox, "mariadb-replica"):  # SIGSTOP: its sockets hang
            marker = len(r.seen)
            code, lines, took = r.end()
    replica_caught_up(sandbox)
    assert code == 2, lines
    assert took < 30  # bounded by --max-wait (3 s, plus the connection's second)
    assert after(lines, marker), lines  # progress lines kept coming while it waited
    error = lines[-1]
    assert error.startswith("dbgauge: error: replica mariadb-replica did not answer"), lines
    assert "--max-wait" in error and "continue with --resume" in error


def test_a_replica_that_stops_applying_ends_the_run(sandbox: Sandbox, sbr_user: None,
                                                    big_table: None) -> None:
    holder = admin(sandbox, "mariadb-replica")
    try:
        with running(sandbox) as r:
            r.started()
            with closing(holder.cursor()) as cur:  # its SQL thread runs, but waits
                cur.execute("FLUSH TABLES WITH READ LOCK")
            marker = len(r.seen)
            code, lines, took = r.end()
    finally:
        holder.close()
    replica_caught_up(sandbox)
    assert code == 2, lines
    assert took < 30
    assert after(lines, marker), lines
    assert lines[-1].startswith("dbgauge: error: ") and "mariadb-replica" in lines[-1], lines
    assert "--max-wait" in lines[-1] or "gave up after pausing 3 s" in lines[-1], lines


def test_a_replica_whose_sql_thread_stops_ends_the_run_at_once(
        sandbox: Sandbox, sbr_user: None, big_table: None) -> None:
    try:
        with running(sandbox) as r:
            r.started()
            execute(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
            code, lines, _took = r.end()
    finally:
        execute(sandbox, "mariadb-replica", "START SLAVE")
        wait_for(lambda: replicating(sandbox), timeout=30)
    replica_caught_up(sandbox)
    assert code == 2, lines
    assert lines[-1].startswith("dbgauge: error: replication on replica mariadb-replica is "
                                "stopped (IO thread Yes, SQL thread No)"), lines
    assert "continue with --resume" in lines[-1]


@contextmanager
def frozen(sandbox: Sandbox, name: str) -> Iterator[None]:
    """A PostgreSQL server and all its processes (postmaster, backends, WAL receiver)
    stopped with SIGSTOP, continued afterwards: stopping the postmaster alone leaves its
    backends answering."""
    pid = Layout(sandbox.directory.resolve()).running_pid(name)
    assert pid is not None, f"{name} is not running"
    children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
                and _ppid(p) == pid]
    pids = [pid, *children]
    try:
        for one in pids:
            with suppress(ProcessLookupError):  # a backend that ended since it was listed
                os.kill(one, signal.SIGSTOP)
        yield
    finally:
        for one in pids:
            with suppress(ProcessLookupError):
                os.kill(one, signal.SIGCONT)


def _ppid(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


@pytest.fixture(scope="module")
def pg_big(sandbox: Sandbox) -> Iterator[None]:
    with pg_admin(sandbox, "pg-primary") as conn:
        conn.execute("DROP TABLE IF EXISTS fl_big_pg")
        conn.execute("CREATE TABLE fl_big_pg (id int PRIMARY KEY, v text)")
        conn.execute("INSERT INTO fl_big_pg SELECT g, md5(g::text) "
                      "FROM generate_series(1, 200000) g")
        conn.execute("GRANT SELECT ON fl_big_pg TO dbgauge")
    try:
        with pg_admin(sandbox, "pg-standby") as standby:
            def replayed() -> bool:
                row = standby.execute("SELECT count(*) FROM fl_big_pg").fetchone()
                return row is not None and row[0] == 200000

            wait_for(lambda: _exists(standby) and replayed(), timeout=60,
                     what="fl_big_pg on the standby")
        yield
    finally:
        with pg_admin(sandbox, "pg-primary") as conn:
            conn.execute("DROP TABLE IF EXISTS fl_big_pg")


def _exists(conn: Any) -> bool:
    row = conn.execute("SELECT to_regclass('fl_big_pg') IS NOT NULL").fetchone()
    return bool(row and row[0])


def test_a_postgres_standby_that_stops_answering_ends_the_run(sandbox: Sandbox,
                                                              pg_big: None) -> None:
    with running(sandbox, "--source", "pg-primary", "--replica", "pg-standby", "--tables",
                 "public.fl_big_pg", "--chunk-size", "30") as r:
        r.started()
        with frozen(sandbox, "pg-standby"):  # statement_timeout cannot fire there now
            marker = len(r.seen)
            code, lines, took = r.end()
    assert code == 2, lines
    assert took < 30
    assert after(lines, marker), lines
    error = lines[-1]
    assert error.startswith("dbgauge: error: replica pg-standby did not answer in time"), lines
    assert "--max-wait" in error and "continue with --resume" in error
