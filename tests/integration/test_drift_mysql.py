"""`dbgauge checksum` on the MariaDB primary and replica of the sandbox: both methods.

Drift is made on the replica with sql_log_bin=0 (no errant GTIDs). Tables drifted here are
never written on the primary again (a row-based update of a row the replica changed would
stop replication); they are dropped at the end, which replicates as DDL.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pymysql  # type: ignore[import-untyped,unused-ignore]
import pytest

from dbgauge.toolkit.render.checksum import render_checksum
from tests.helpers import DBGAUGE, REPO
from tests.helpers.drift import (
    STATE_HOME,
    binlog_watch,
    exit_code,
    found,
    outside_dbgauge,
    sbr_target,
    table_docs,
)
from tests.helpers.drift import mariadb_check as check
from tests.helpers.servers import Sandbox, admin, caught_up, execute, one

pytestmark = pytest.mark.integration



DRIFT_T = """CREATE TABLE app.drift_t (
  id INT NOT NULL PRIMARY KEY, name VARCHAR(40) NULL, code CHAR(10) NULL, score DOUBLE NULL,
  f FLOAT NULL,
  amount DECIMAL(10,2) NOT NULL, seen TIMESTAMP(6) NULL, payload BLOB NULL,
  flag BOOLEAN NOT NULL DEFAULT 0)"""
DRIFT_C = """CREATE TABLE app.drift_c (
  a INT NOT NULL, b VARCHAR(20) NOT NULL, v INT NULL, PRIMARY KEY (a, b))"""
ROWS = 3000  # ids 2, 4, ..., 6000 (app.seq_1_to_3000): odd ids exist only on the replica


@pytest.fixture(scope="module")
def drifted(sandbox: Sandbox, sbr_user: None) -> Iterator[dict[str, set[tuple[str, Any]]]]:
    """app.drift_t and app.drift_c, equal on both servers, then drifted on the replica.

    Yields the differences every method must find: exactly these, no others.
    """
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_t, app.drift_c",
            DRIFT_T, DRIFT_C,
            """INSERT INTO app.drift_t SELECT seq * 2, CONCAT('name-', seq),
                 CONCAT('c', seq % 97), seq / 7, seq / 3, seq * 1.25,
                 TIMESTAMP('2024-01-01 00:00:00') + INTERVAL seq SECOND,
                 UNHEX(MD5(seq)), seq % 2 FROM app.seq_1_to_3000""",
            "INSERT INTO app.drift_t (id, name, amount) VALUES (30000, NULL, 0)",
            "UPDATE app.drift_t SET score = 0.1, f = 0.1, name = 'abc', code = 'xyz' "
            "WHERE id IN (40, 42, 50, 52)",
            """INSERT INTO app.drift_c SELECT seq % 50, CONCAT('b', seq), seq
                 FROM app.seq_1_to_2000""")
    caught_up(sandbox)
    execute(sandbox, "mariadb-replica",
            "UPDATE app.drift_t SET name = 'changed' WHERE id = 18",  # a changed value
            "DELETE FROM app.drift_t WHERE id = 250",  # a deleted row
            "INSERT INTO app.drift_t (id, amount) VALUES (1501, 1)",  # an extra row, mid-table
            "INSERT INTO app.drift_t (id, amount) VALUES (100001, 1)",  # extra, past the end
            "UPDATE app.drift_t SET name = '' WHERE id = 30000",  # NULL vs ''
            "UPDATE app.drift_t SET name = 'abc ' WHERE id = 40",  # trailing space, VARCHAR
            "UPDATE app.drift_t SET code = 'xyz ' WHERE id = 42",  # CHAR pads: no difference
            "UPDATE app.drift_t SET score = 0.10000000000000002 WHERE id = 50",  # last digit
            "UPDATE app.drift_t SET f = 0.10000001 WHERE id = 52",  # FLOAT: next single
            "UPDATE app.drift_t SET payload = CONCAT(LEFT(payload, 15), 'x') WHERE id = 60",
            "UPDATE app.drift_c SET v = v + 1 WHERE a = 3 AND b = 'b53'",  # composite key
            log_bin=False)
    for query in ("SELECT score FROM app.drift_t WHERE id = 50",  # the drift is real
                  "SELECT CAST(f AS DOUBLE) FROM app.drift_t WHERE id = 52"):
        assert one(sandbox, "mariadb-replica", query) != one(sandbox, "mariadb-primary", query)
    # ... though MariaDB shows both FLOATs alike: '0.1' (6 significant digits)
    assert one(sandbox, "mariadb-replica", "SELECT CONCAT(f) FROM app.drift_t WHERE id = 52") \
        == one(sandbox, "mariadb-primary", "SELECT CONCAT(f) FROM app.drift_t WHERE id = 52")
    try:
        yield {
            "app.drift_t": {("changed", (18,)), ("missing", (250,)), ("extra", (1501,)),
                            ("extra", (100001,)), ("changed", (30000,)), ("changed", (40,)),
                            ("changed", (50,)), ("changed", (52,)), ("changed", (60,))},
            "app.drift_c": {("changed", (3, "b53"))},
        }
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_t, app.drift_c")
        caught_up(sandbox)


@pytest.mark.parametrize("method", ["direct", "replicated"])
def test_each_method_finds_exactly_the_drifted_rows(sandbox: Sandbox, drifted: Any,
                                                    method: str) -> None:
    with binlog_watch(sandbox) as written:
        result = check(sandbox, method, ("app.drift_t", "app.drift_c"), chunk_time=0.02,
                       initial_chunk_rows=300, leaf_rows=64)
    assert result.evidence["method"] == method
    assert found(result) == drifted
    assert exit_code(result) == 1 and result.evidence["status"] == "drift"
    t = {r["table"]: r for r in table_docs(result)}
    assert not any(r["whole_table"] for r in table_docs(result))  # the pre-check saw drift
    assert t["app.drift_t"]["rows"] == ROWS + 1 and t["app.drift_c"]["rows"] == 2000
    assert t["app.drift_t"]["chunks"] > 2  # several chunks, so bisection had work to do
    assert t["app.drift_t"]["differing_rows"] == {"mariadb-replica": 9}
    # changed rows name the columns that differ; values are never shown by default
    assert {d["key"]["id"]: d["columns"] for d in t["app.drift_t"]["differences"]
            if d["kind"] == "changed"} == {18: ["name"], 30000: ["name"], 40: ["name"],
                                           50: ["score"], 52: ["f"], 60: ["payload"]}
    assert [d["columns"] for d in t["app.drift_c"]["differences"]] == [["v"]]
    assert not any("values" in d for r in table_docs(result) for d in r["differences"])
    assert outside_dbgauge(written) == []
    if method == "replicated":  # it wrote its chunks, and only there
        assert any("dbgauge.checksums" in w or "checksums" in w for w in written)


def test_cli_json_and_print_repair_make_the_replica_match(sandbox: Sandbox, drifted: Any,
                                                         tmp_path: Path) -> None:
    proc = subprocess.run(
        [*DBGAUGE, "checksum", "--config", str(sandbox.config), "--source", "mariadb-primary",
         "--replica", "mariadb-replica", "--tables", "app.drift_t,app.drift_c", "--method",
         "direct", "--format", "json", "--print-repair", "--retry-delay", "0.05",
         "--state-file", str(tmp_path / "state.json")],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "drift"
    tables = {t["table"]: t for t in doc["tables"]}
    assert tables["app.drift_c"]["differences"] == [
        {"replica": "mariadb-replica", "kind": "changed", "key": {"a": 3, "b": "b53"},
         "columns": ["v"]}]
    shown = subprocess.run(
        [*DBGAUGE, "checksum", "--config", str(sandbox.config), "--source", "mariadb-primary",
         "--replica", "mariadb-replica", "--tables", "app.drift_t", "--method", "direct",
         "--show-values", "--retry-delay", "0.05", "--state-file", str(tmp_path / "s2.json")],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert shown.returncode == 1, shown.stderr
    assert ("  mariadb-replica: changed id=18 (columns: name)\n"
            '      name: source "name-9", replica "changed"\n') in shown.stdout, shown.stdout
    assert '      name: source null, replica ""\n' in shown.stdout  # id 30000: NULL vs ''
    assert '      payload: source "0x' in shown.stdout
    assert {(d["kind"], d["key"]["id"]) for d in tables["app.drift_t"]["differences"]} == {
        (kind, key[0]) for kind, key in drifted["app.drift_t"]}
    assert tables["app.drift_t"]["rows"] == ROWS + 1 and tables["app.drift_t"]["chunks"] >= 1
    script = doc["repair"]["mariadb-replica"]
    assert "SET SESSION sql_log_bin = 0;" in script
    assert "DELETE FROM `app`.`drift_t` WHERE `id` = 1501;" in script
    with closing(admin(sandbox, "mariadb-replica")) as conn:  # the operator runs them
        cur = conn.cursor()
        for statement in script:
            if not statement.startswith("--"):
                cur.execute(statement)
    again = check(sandbox, "direct", ("app.drift_t", "app.drift_c"))
    assert exit_code(again) == 0 and found(again) == {"app.drift_t": set(), "app.drift_c": set()}


# ----------------------------------------------------------------- live writes


class Writer:
    """Threads committing UPDATEs, INSERTs and DELETEs on the primary as fast as they can."""

    UPDATE = "UPDATE app.drift_live SET k = k + 1, c = %s WHERE id = %s"
    INSERT = ("INSERT INTO app.drift_live (id, k, c) VALUES (%s, 1, 'new') "
              "ON DUPLICATE KEY UPDATE k = k + 1")
    DELETE = "DELETE FROM app.drift_live WHERE id = %s"

    def __init__(self, sandbox: Sandbox, rows: int, threads: int = 3) -> None:
        self.sandbox, self.rows = sandbox, rows
        self.commits = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(n,), daemon=True)
                         for n in range(threads)]

    def _run(self, n: int) -> None:
        import random

        rnd = random.Random(n)
        extra = 10_000_000 + n * 1_000_000
        try:
            with closing(admin(self.sandbox, "mariadb-primary")) as conn:
                cur = conn.cursor()
                while not self._stop.is_set():
                    op = rnd.random()
                    if op < 0.8:
                        cur.execute(self.UPDATE, (uuid.uuid4().hex, rnd.randint(1, self.rows)))
                    elif op < 0.9:
                        extra += 1
                        cur.execute(self.INSERT, (extra,))
                    else:
                        cur.execute(self.DELETE, (extra,))
                    with self._lock:
                        self.commits += 1
        except pymysql.err.MySQLError as exc:
            self.errors.append(str(exc))

    def __enter__(self) -> Writer:
        for thread in self._threads:
            thread.start()
        time.sleep(0.3)  # writing before the check starts
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.2)  # and still writing after it ended
        self._stop.set()
        for thread in self._threads:
            thread.join(10)


LIVE_ROWS = 50_000  # app.seq_1_to_50000


@pytest.fixture(scope="module")
def live_table(sandbox: Sandbox) -> Iterator[str]:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_live",
            "CREATE TABLE app.drift_live (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, "
            "c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL DEFAULT '')",
            "INSERT INTO app.drift_live SELECT seq, seq, MD5(seq), 'pad' "
            "FROM app.seq_1_to_50000")
    caught_up(sandbox)
    try:
        yield "app.drift_live"
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_live")
        caught_up(sandbox)


@pytest.mark.parametrize(("method", "whole_table_idle"), [
    ("direct", None), ("replicated", None),
    # The pre-check attempted on the busy table (writes in flight: it differs, and the walk
    # runs; or it proves the copies equal at the moment both read them).
    ("direct", 0.0), ("replicated", 0.0)])
def test_no_false_positives_under_300_commits_per_second(
        sandbox: Sandbox, live_table: str, sbr_user: None, method: str,
        whole_table_idle: float | None) -> None:
    precheck: dict[str, float] = ({"whole_table_time": 0.0} if whole_table_idle is None else
                                  {"whole_table_idle": whole_table_idle})
    with Writer(sandbox, LIVE_ROWS) as writer:
        before, started = writer.commits, time.monotonic()
        result = check(sandbox, method, (live_table,), chunk_time=0.002,
                       initial_chunk_rows=300, **precheck)
        rate = (writer.commits - before) / (time.monotonic() - started)
    assert not writer.errors
    assert rate >= 300, f"the writer managed only {rate:.0f} commits/s"
    table = table_docs(result)[0]
    if whole_table_idle is None:
        assert table["chunks"] >= 15, table  # many chunks compared while rows changed
    else:  # the pre-check may prove both copies equal at the moment it read them
        assert table["whole_table"] or table["chunks"] >= 15, table
    assert table["differences"] == [] and table["differing_chunks"] == {}, table
    assert exit_code(result) == 0, result.evidence


@pytest.mark.parametrize("method", ["direct", "replicated"])
def test_no_false_positives_on_rows_written_all_the_time(
        sandbox: Sandbox, live_table: str, sbr_user: None, method: str) -> None:
    """300+ commits/s on 30 rows only: their chunk differs at every look and the rows are
    candidates again and again; a row is reported only when two synchronised reads in a row
    see it hold still, which rows under writes never do."""
    with Writer(sandbox, 30) as writer:
        before, started = writer.commits, time.monotonic()
        result = check(sandbox, method, (live_table,), chunk_time=0.002,
                       initial_chunk_rows=300, whole_table_time=0.0)
        rate = (writer.commits - before) / (time.monotonic() - started)
    assert not writer.errors
    assert rate >= 300, f"the writer managed only {rate:.0f} commits/s"
    table = table_docs(result)[0]
    assert table["differences"] == [] and table["differing_chunks"] == {}, table
    assert exit_code(result) == 0, result.evidence


# ----------------------------------------------------------------- CLI, bad input


def cli(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(STATE_HOME)}  # --resume state: not in ~
    return subprocess.run([*DBGAUGE, "checksum", "--config", str(sandbox.config), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
                          env=env)


@pytest.mark.parametrize("method", ["direct", "replicated"])
def test_clean_replica_exits_0(sandbox: Sandbox, live_table: str, sbr_user: None,
                               method: str) -> None:
    source = "mariadb-primary"
    extra: list[str] = []
    if method == "replicated":
        source = sbr_target(sandbox).dsn
    caught_up(sandbox)
    proc = cli(sandbox, "--source", source, "--replica", "mariadb-replica", "--tables",
               live_table, "--method", method, "--format", "json", *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "ok" and doc["method"] == method
    assert doc["tables"][0]["rows"] >= LIVE_ROWS and doc["tables"][0]["differences"] == []
    text = cli(sandbox, "--source", source, "--replica", "mariadb-replica", "--tables",
               live_table, "--method", method)
    assert text.returncode == 0 and "no drift" in text.stdout, text.stdout + text.stderr
    assert "\r" not in text.stderr  # no progress bar when stderr is not a terminal


def test_progress_bar_only_on_a_terminal(sandbox: Sandbox, live_table: str) -> None:
    import os
    import pty

    master, slave = pty.openpty()
    output = bytearray()

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO once the last writer closed the terminal
                return
            if not data:
                return
            output.extend(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc = subprocess.run(
            [*DBGAUGE, "checksum", "--config", str(sandbox.config), "--source",
             "mariadb-primary", "--replica", "mariadb-replica", "--tables", live_table,
             "--method", "direct", "--chunk-time", "0.01", "--state-file",
             str(STATE_HOME / "progress.json")],
            stdout=subprocess.PIPE, stderr=slave, text=True, timeout=120, cwd=REPO,
            check=False)
    finally:
        os.close(slave)
        reader.join(10)
        os.close(master)
    assert proc.returncode == 0, proc.stdout
    bar = output.decode()
    assert f"\r\x1b[Ktable 1 of 1 {live_table} [" in bar and "100% ETA" in bar, bar
    assert bar.endswith("\r\x1b[K")  # the bar is wiped before the summary is printed
    assert "no drift" in proc.stdout and "\r" not in proc.stdout


def _replication_running(sandbox: Sandbox) -> bool:
    with closing(admin(sandbox, "mariadb-replica")) as conn:
        cur = conn.cursor(pymysql.cursors.DictCursor)
        cur.execute("SHOW SLAVE STATUS")
        row = cur.fetchone()
    return bool(row and row["Slave_IO_Running"] == "Yes" and row["Slave_SQL_Running"] == "Yes")


@contextmanager
def replication_stopped(sandbox: Sandbox) -> Iterator[None]:
    execute(sandbox, "mariadb-replica", "STOP SLAVE")
    try:
        yield
    finally:
        execute(sandbox, "mariadb-replica", "START SLAVE")
        deadline = time.monotonic() + 30
        while not _replication_running(sandbox):
            assert time.monotonic() < deadline, "replication did not restart"
            time.sleep(0.1)
        caught_up(sandbox)


@pytest.mark.parametrize("case", ["unknown table", "no privilege", "unreachable replica",
                                  "replication stopped"])
def test_bad_input_exits_2_with_a_clear_message(sandbox: Sandbox, live_table: str,
                                                case: str) -> None:
    args = ["--source", "mariadb-primary", "--replica", "mariadb-replica", "--tables",
            live_table, "--method", "direct"]
    expect = {
        "unknown table": r"table app\.no_such_table does not exist on source mariadb-primary",
        "no privilege": r"replicated method needs the privilege to set the session "
                        r"binlog_format.*use --method direct",
        "unreachable replica": r"replica 127\.0\.0\.1:1: cannot connect to 127\.0\.0\.1:1",
        "replication stopped": r"replication on replica mariadb-replica is stopped \(IO "
                               r"thread No, SQL thread No\)",
    }[case]
    if case == "unknown table":
        args[5] = "app.no_such_table"
    elif case == "no privilege":
        args[7] = "replicated"  # as the monitoring user, who lacks BINLOG ADMIN
    elif case == "unreachable replica":
        args[3] = "mysql://dbgauge@127.0.0.1:1/"
    with binlog_watch(sandbox) as written:
        if case == "replication stopped":
            with replication_stopped(sandbox):
                proc = cli(sandbox, *args)
        else:
            proc = cli(sandbox, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert re.search(expect, proc.stderr), proc.stderr
    assert proc.stderr.startswith("dbgauge: error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and sandbox.state.dbgauge_password not in proc.stderr
    assert proc.stdout == ""
    assert outside_dbgauge(written) == []


# ----------------------------------------------------------------- resume, keyless tables


def test_run_time_stops_and_resume_continues(sandbox: Sandbox, tmp_path: Path) -> None:
    rows = 100_000
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_big",
            "CREATE TABLE app.drift_big (id INT NOT NULL PRIMARY KEY, v VARCHAR(32))",
            "INSERT INTO app.drift_big SELECT seq, MD5(seq) FROM app.seq_1_to_100000")
    try:
        caught_up(sandbox)
        execute(sandbox, "mariadb-replica", "UPDATE app.drift_big SET v = 'x' WHERE id = 99000",
                log_bin=False)
        state = tmp_path / "state.json"
        args = ["--source", "mariadb-primary", "--replica", "mariadb-replica", "--tables",
                "app.drift_big", "--method", "direct", "--state-file", str(state),
                "--format", "json"]
        # Chunks of a row or two: the walk takes far longer than --run-time (75 s on an idle
        # sandbox); 2 s leaves a loaded machine time to connect and pre-check first (with
        # 0.05 s a run under load stopped before its first chunk, nothing saved).
        first = cli(sandbox, *args, "--chunk-time", "0.0001", "--run-time", "2",
                    "--whole-table-time", "0")
        assert first.returncode == 2, first.stdout + first.stderr
        assert "continue with --resume" in first.stderr
        saved = json.loads(state.read_text())["tables"]["app.drift_big"]
        assert saved["status"] == "running" and 0 < saved["rows"] < rows
        second = cli(sandbox, *args, "--chunk-time", "0.05", "--resume")
        assert second.returncode == 1, second.stdout + second.stderr
        table = json.loads(second.stdout)["tables"][0]
        assert table["resumed_from_chunk"] == saved["chunks"] + 1
        assert table["rows"] == rows and table["chunks"] > saved["chunks"]
        assert table["differences"] == [
            {"replica": "mariadb-replica", "kind": "changed", "key": {"id": 99000},
             "columns": ["v"]}]
        third = cli(sandbox, *args, "--chunk-time", "0.05", "--resume")  # nothing to resume
        assert third.returncode == 1 and json.loads(third.stdout)["tables"][0][
            "resumed_from_chunk"] is None
        assert "nothing to resume" in third.stderr
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_big")
        caught_up(sandbox)


def test_table_without_key_one_chunk_or_unchecked(sandbox: Sandbox, sbr_user: None) -> None:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_nokey",
            "CREATE TABLE app.drift_nokey (v INT, w VARCHAR(10))",
            "INSERT INTO app.drift_nokey SELECT seq % 100, 'x' FROM app.seq_1_to_500")
    try:
        caught_up(sandbox)
        same = check(sandbox, "direct", ("app.drift_nokey",))
        assert exit_code(same) == 0 and table_docs(same)[0]["chunks"] == 1
        assert table_docs(same)[0]["rows"] == 500
        big = check(sandbox, "direct", ("app.drift_nokey",), one_chunk_max_rows=100)
        assert exit_code(big) == 2 and table_docs(big)[0]["status"] == "unchecked"
        assert "no primary key or unique NOT NULL key" in (table_docs(big)[0]["reason"] or "")
        execute(sandbox, "mariadb-replica", "UPDATE app.drift_nokey SET w = 'y' LIMIT 1",
                log_bin=False)
        execute(sandbox, "mariadb-replica", "DELETE FROM app.drift_nokey WHERE v = 7 LIMIT 1",
                log_bin=False)
        for method in ("direct", "replicated"):
            drift = check(sandbox, method, ("app.drift_nokey",))
            assert exit_code(drift) == 1, method
            table = table_docs(drift)[0]
            assert table["differing_chunks"] == {"mariadb-replica": 1}
            # What was compared, not a misleading "0 differing rows".
            (unnamed,) = table["unnamed_differences"]
            assert (unnamed["replica"], unnamed["compared_as"], unnamed["source_rows"],
                    unnamed["replica_rows"]) == ("mariadb-replica", "one chunk", 500, 499)
            assert "cannot be named" in unnamed["detail"]
            line = render_checksum(drift).splitlines()[2]
            assert line.split()[:5] == ["app.drift_nokey", "500", "1", "1", "?"], line
            assert "mariadb-replica: the table differs, compared as one chunk: 500 rows on " \
                "the source, 499 on mariadb-replica" in render_checksum(drift)
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_nokey")
        caught_up(sandbox)
