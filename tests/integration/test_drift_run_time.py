"""`dbgauge checksum --run-time` and `--resume` on the sandbox's MariaDB primary and replica:
the limit holds during re-checks and bisection too, and state is only resumed on the
servers, tables and arguments it was written for.

Drift is made on the replica with sql_log_bin=0; drifted tables are dropped at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pymysql  # type: ignore[import-untyped,unused-ignore]
import pytest

from dbgauge.checks.drift import ChecksumOptions, Interrupted, run_checksum
from dbgauge.toolkit.result import CheckResult
from dbgauge.toolkit.targets import Target
from tests.helpers import DBGAUGE, REPO
from tests.helpers.drift import targets
from tests.helpers.servers import Sandbox, admin, caught_up, execute, mariadb_account

pytestmark = pytest.mark.integration

SBR_USER = "dbgauge_sbr_rt"  # may set the session binlog_format (the replicated method)
ROWS = 20_000
DRIFTED = {("changed", (i,)) for i in range(250, ROWS, 500)}  # 40 rows, spread out


def found(result: CheckResult) -> set[tuple[str, tuple[Any, ...]]]:
    return {(d["kind"], tuple(d["key"].values()))
            for t in result.evidence["tables"] for d in t["differences"]}


@pytest.fixture(scope="module")
def sbr_source(sandbox: Sandbox) -> Iterator[Target]:
    password = f"sbr-{sandbox.state.dbgauge_password}"
    port = sandbox.state.port("mariadb-primary")
    with mariadb_account(sandbox, SBR_USER, password, "SELECT, BINLOG ADMIN, SLAVE MONITOR",
                         "dbgauge"):
        # Named as the CLI names this DSN, so the CLI can resume what this wrote.
        yield Target(name=f"127.0.0.1:{port}", kind="mysql",
                     dsn=f"mysql://{SBR_USER}:{password}@127.0.0.1:{port}/")


@pytest.fixture(scope="module")
def slow_table(sandbox: Sandbox) -> Iterator[str]:
    """app.drift_slow: 20,000 rows, 40 of them changed on the replica, one every 500 keys:
    every chunk differs, so re-checks and bisection take most of a run."""
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_slow",
            "CREATE TABLE app.drift_slow (id INT NOT NULL PRIMARY KEY, v VARCHAR(32))",
            "INSERT INTO app.drift_slow SELECT seq, MD5(seq) FROM app.seq_1_to_20000")
    try:
        caught_up(sandbox)
        execute(sandbox, "mariadb-replica",
                "UPDATE app.drift_slow SET v = 'x' WHERE id % 500 = 250", log_bin=False)
        yield "app.drift_slow"
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_slow")
        caught_up(sandbox)


def options(table: str, method: str, **more: Any) -> ChecksumOptions:
    # Rows that keep moving (`churning`) are read again up to 10 times, 0.4 s apart: the
    # verdict takes seconds, the walk not.
    return ChecksumOptions(tables=(table,), method=method, retries=10, retry_delay=0.4,
                           whole_table_time=0, chunk_time=0.05, initial_chunk_rows=2000,
                           **more)


@contextmanager
def churning(sandbox: Sandbox) -> Iterator[None]:
    """The drifted rows rewritten on the replica (not replicated) every few ms: they differ
    in every read but never hold still, so they are confirmed only after every re-read.
    The loop runs inside the server (a compound statement committing each UPDATE), so its
    pace does not depend on this process getting the CPU or the GIL; it ends when its
    connection is killed (KILL QUERY would only cut a SLEEP short)."""
    started = threading.Event()

    def churn(conn: Any) -> None:
        cur = conn.cursor()
        cur.execute("SET SESSION sql_log_bin = 0")
        started.set()
        try:
            cur.execute("BEGIN NOT ATOMIC LOOP "
                        "UPDATE app.drift_slow SET v = LEFT(UUID(), 8) WHERE id % 500 = 250; "
                        "COMMIT; DO SLEEP(0.002); END LOOP; END")
        except pymysql.err.OperationalError:  # its connection killed below
            pass

    with closing(admin(sandbox, "mariadb-replica", database=None)) as conn:
        thread_id = conn.thread_id()
        thread = threading.Thread(target=churn, args=(conn,), daemon=True)
        thread.start()
        assert started.wait(10)
        try:
            yield
        finally:
            execute(sandbox, "mariadb-replica", f"KILL CONNECTION {int(thread_id)}")
            thread.join(10)
            assert not thread.is_alive()


@pytest.mark.parametrize("method", ["direct", "replicated"])
def test_run_time_holds_during_rechecks_and_resume_finds_the_same_rows(
        sandbox: Sandbox, slow_table: str, sbr_source: Target, tmp_path: Path,
        method: str) -> None:
    t = targets(sandbox)
    source = sbr_source if method == "replicated" else t["mariadb-primary"]
    replica = t["mariadb-replica"]
    with churning(sandbox):
        _stop_and_resume(sandbox, slow_table, source, replica, tmp_path, method)


def _stop_and_resume(sandbox: Sandbox, slow_table: str, source: Target, replica: Target,
                     tmp_path: Path, method: str) -> None:
    started = time.monotonic()
    full = run_checksum(source, [replica], options(slow_table, method, keep_state=False))
    full_seconds = time.monotonic() - started
    assert found(full) == DRIFTED, full.evidence

    limit = 1.0
    assert full_seconds > 3 * limit, f"the run without a limit took only {full_seconds:.2f} s"
    state = tmp_path / "state.json"
    started = time.monotonic()
    with pytest.raises(Interrupted, match=r"stopped after --run-time 1 s.*continue with "
                                          r"--resume"):
        run_checksum(source, [replica], options(slow_table, method, state_file=state,
                                                run_time=limit))
    elapsed = time.monotonic() - started
    # The limit counts from the first chunk; connecting and the stop itself add little.
    assert elapsed < 1.5 * limit, f"--run-time {limit} stopped only after {elapsed:.2f} s"
    saved = json.loads(state.read_text())["tables"][slow_table]
    # Stopped after the walk, in the re-checks: the suspects wait in the state file.
    assert saved["status"] == "running" and saved.get("walked"), saved
    assert saved["rows"] == ROWS

    dsn = source.dsn if method == "replicated" else "mariadb-primary"
    proc = subprocess.run(
        [*DBGAUGE, "checksum", "--config", str(sandbox.config), "--source", dsn,
         "--replica", "mariadb-replica", "--tables", slow_table, "--method", method,
         "--retries", "4", "--retry-delay", "0.3", "--whole-table-time", "0",
         "--chunk-time", "0.05", "--state-file", str(state), "--resume", "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    table = json.loads(proc.stdout)["tables"][0]
    assert table["resumed_from_chunk"] == saved["chunks"] + 1
    assert {(d["kind"], tuple(d["key"].values())) for d in table["differences"]} == DRIFTED
    assert table["rows"] == ROWS and not state.exists()  # done: nothing left to resume


def _config(sandbox: Sandbox, path: Path, source: str, replica: str) -> Path:
    """A config naming two sandbox servers `src` and `rep`."""
    t = targets(sandbox)
    lines = ["targets:"]
    for name, server in (("src", source), ("rep", replica)):
        lines += [f"  - name: {name}", "    kind: mysql", f"    dsn: {t[server].dsn}",
                  f"    password_file: {sandbox.state.dbgauge_password_file}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_resume_is_refused_on_other_servers_with_the_same_names(
        sandbox: Sandbox, slow_table: str, tmp_path: Path) -> None:
    """Two configs name different servers `rep`: the state one left is not continued by
    the other (exit 2, saying what differs), and is by the first."""
    cluster_a = _config(sandbox, tmp_path / "a.yaml", "mariadb-primary", "mariadb-replica")
    cluster_b = _config(sandbox, tmp_path / "b.yaml", "mariadb-primary", "mariadb-primary")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}  # the default file

    def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*DBGAUGE, "checksum", "--config", str(config), "--source", "src", "--replica",
             "rep", "--tables", slow_table, "--method", "direct", "--whole-table-time", "0",
             "--retry-delay", "0.05", "--format", "json", *args],
            capture_output=True, text=True, timeout=120, cwd=REPO, check=False, env=env)

    # A first run stopped by --run-time after at least one chunk (on a busy machine 0.05 s
    # can end before the first one: the run is then started again with more time).
    for run_time in ("0.05", "0.2", "0.5", "1"):
        first = cli(cluster_a, "--chunk-time", "0.0001", "--run-time", run_time)
        assert first.returncode == 2 and "continue with --resume" in first.stderr, first.stderr
        (state,) = (tmp_path / "state" / "dbgauge").glob("checksum-*.json")
        if json.loads(state.read_text())["tables"].get(slow_table, {}).get("chunks"):
            break
    else:
        pytest.fail("no run stopped by --run-time had walked a chunk")

    other = cli(cluster_b, "--resume")
    assert other.returncode == 2, other.stdout + other.stderr
    replica_port = sandbox.state.port("mariadb-replica")
    primary_port = sandbox.state.port("mariadb-primary")
    assert other.stderr.splitlines()[-1] + "\n" == (  # after "rep is not a replica"
        f"dbgauge: error: --resume: the state file {state} was written for another run (rep "
        f"was mysql://127.0.0.1:{replica_port}/, now mysql://127.0.0.1:{primary_port}/): "
        "pass --state-file to keep this run's progress apart, or run without --resume to "
        "start afresh (which replaces that progress)\n")
    # --format json: the same error as a JSON document on stdout
    assert json.loads(other.stdout) == {"status": "error", "tables": [], "notes": [],
                                        "error": other.stderr.splitlines()[-1][16:]}
    assert state.exists()
    # Another result-changing argument is refused too (given that file), and says which.
    excluded = cli(cluster_a, "--resume", "--exclude", "app.nothing_*", "--state-file",
                   str(state))
    assert excluded.returncode == 2 and "--exclude was [], now ['app.nothing_*']" in \
        excluded.stderr, excluded.stderr

    same = cli(cluster_a, "--resume", "--chunk-time", "0.05")  # pacing may change
    assert same.returncode == 1, same.stdout + same.stderr
    table = json.loads(same.stdout)["tables"][0]
    assert table["resumed_from_chunk"] is not None and table["rows"] == ROWS
    assert {(d["kind"], tuple(d["key"].values())) for d in table["differences"]} == DRIFTED
    assert not state.exists()
