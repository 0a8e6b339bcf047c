"""`dbgauge pgtap run` against the sandbox's PostgreSQL with pgTAP from the Debian package:
verdicts and exit codes for every kind of file, pg_prove agreeing file by file, -j 4 vs
-j 1, JUnit, raw TAP, xUnit runtests(), --install-pgtap, timeouts and connection errors.

Everything runs in scratch databases created and dropped here (other tests use `app`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.pgtap.psql import find_psql
from dbgauge.toolkit.sql import quote_ident
from tests.helpers import REPO
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

SUITES = REPO / "tests" / "fixtures" / "pgtap" / "suites"
XUNIT = REPO / "tests" / "fixtures" / "pgtap" / "xunit"
EXPECTED = {
    "bailout.sql": "FAILED", "fail.sql": "FAILED", "meta.sql": "ok", "pass.sql": "ok",
    "plan_at_end.sql": "ok", "plan_mismatch.sql": "FAILED", "skip_all.sql": "ok",
    "sql_error.sql": "FAILED", "todo_skip.sql": "ok", "variables.pg": "ok",
}
VERDICT = re.compile(r"^(\S+) \.+ (ok|FAILED)\b", re.MULTILINE)


class Scratch:
    """A database created for these tests (pgtap created in it unless told otherwise)."""

    def __init__(self, sandbox: Sandbox, *, pgtap: bool) -> None:
        self.admin = sandbox.admin_dsn("pg-primary")
        self.name = f"dbgauge_pgtap_{uuid.uuid4().hex[:10]}"
        self.dsn = sandbox.admin_dsn("pg-primary", database=self.name)
        self.password = sandbox.state.postgres.admin_password
        conn = connect_dsn(self.admin)
        try:
            conn.execute_sql(f"CREATE DATABASE {quote_ident(self.name, 'postgres')}")
        finally:
            conn.close()
        if pgtap:
            self.sql("CREATE EXTENSION pgtap")

    def sql(self, statement: str) -> list[dict[str, object]]:
        conn = connect_dsn(self.dsn)
        try:
            return conn.execute_sql(statement)
        finally:
            conn.close()

    def drop(self) -> None:
        conn = connect_dsn(self.admin)
        try:
            conn.execute_sql(
                f"DROP DATABASE IF EXISTS {quote_ident(self.name, 'postgres')} WITH (FORCE)")
        finally:
            conn.close()


@pytest.fixture(scope="module")
def db(sandbox: Sandbox) -> Iterator[Scratch]:
    scratch = Scratch(sandbox, pgtap=True)
    yield scratch
    scratch.drop()


def dbgauge(dsn: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI as users run it; the DSN (with its password) travels in the environment."""
    env = {**os.environ, "DBGAUGE_PGTAP_DSN": dsn}
    return subprocess.run([sys.executable, "-m", "dbgauge", "pgtap", "run", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def verdicts(output: str) -> dict[str, str]:
    return {Path(name).name: verdict for name, verdict in VERDICT.findall(output)}


def test_verdicts_exit_codes_and_junit(db: Scratch, tmp_path: Path) -> None:
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    run = dbgauge(db.dsn, str(SUITES), "--set", f"expected_db={db.name}", "--junit", str(junit))
    assert run.returncode == 1, run.stdout + run.stderr
    assert verdicts(run.stdout) == EXPECTED
    assert db.password not in run.stdout + run.stderr
    assert "Files=10, Tests=27, Failed files=4" in run.stdout
    assert "Result: FAIL" in run.stdout
    out = run.stdout
    assert 'SQL error at line 6 (psql exited 3): ERROR:  relation "no_such_table_dbgauge_' \
           'fixture" does not exist' in out
    assert "bad plan: planned 5 test(s) but ran 3" in out
    assert "Bail out! fixture database is not prepared" in out
    assert "#         want: 2" in out

    root = ET.parse(junit).getroot()
    suites = {Path(s.get("name", "")).name: s for s in root.findall("testsuite")}
    assert set(suites) == set(EXPECTED)
    failure = suites["fail.sql"].find("testcase[@name='one is two']/failure")
    assert failure is not None and "have: 1" in (failure.text or "")
    for name, verdict in EXPECTED.items():
        bad = int(suites[name].get("failures", "0")) + int(suites[name].get("errors", "0"))
        assert (bad == 0) == (verdict == "ok"), name
    assert float(suites["pass.sql"].get("time", "0")) > 0
    assert all(c.get("time") for c in suites["pass.sql"].findall("testcase"))


def test_single_files_exit_0_or_1(db: Scratch) -> None:
    ok = dbgauge(db.dsn, str(SUITES / "pass.sql"), str(SUITES / "todo_skip.sql"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Result: PASS" in ok.stdout
    for name in ("fail.sql", "plan_mismatch.sql", "sql_error.sql", "bailout.sql"):
        bad = dbgauge(db.dsn, str(SUITES / name))
        assert bad.returncode == 1, (name, bad.stdout, bad.stderr)


def test_backslash_i_is_relative_to_the_working_directory(db: Scratch, tmp_path: Path) -> None:
    """\\i resolves against psql's working directory (ours, as under pg_prove), \\ir
    against the including file."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "answer.inc").write_text("\\set answer 42\n")
    test = tmp_path / "inc_test.sql"
    test.write_text("\\i inc/answer.inc\nSELECT plan(1);\n"
                    "SELECT is(:answer, 42, 'variable from the \\\\i include');\n")
    env = {**os.environ, "DBGAUGE_PGTAP_DSN": db.dsn}
    run = subprocess.run([sys.executable, "-m", "dbgauge", "pgtap", "run", test.name],
                         cwd=tmp_path, env={**env, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    elsewhere = dbgauge(db.dsn, str(test))  # from the repository root: inc/ is not there
    assert elsewhere.returncode == 1 and "inc/answer.inc: No such file" in elsewhere.stdout


def test_pg_prove_agrees_file_by_file(db: Scratch) -> None:
    """The same files under pg_prove (one run per file: its Bail out! stops a whole run)."""
    url = urlsplit(db.dsn)
    env = {**os.environ, "PGPASSWORD": db.password}
    ours = verdicts(dbgauge(db.dsn, str(SUITES), "--set", f"expected_db={db.name}").stdout)
    theirs = {}
    for name in sorted(EXPECTED):
        prove = subprocess.run(
            ["pg_prove", "--host", str(url.hostname), "--port", str(url.port),
             "--username", "sandbox_admin", "--dbname", db.name,
             "--set", f"expected_db={db.name}", str(SUITES / name)],
            env=env, capture_output=True, text=True, timeout=60, check=False)
        theirs[name] = "ok" if prove.returncode == 0 else "FAILED"
    assert theirs == EXPECTED
    assert ours == theirs


def test_debian_psql_runs_without_its_wrapper_and_agrees_with_it(db: Scratch) -> None:
    """deploy/install-deps installs Debian's client, whose psql on PATH is pg_wrapper: the
    runner runs the binary behind it, and the wrapper given as --psql gives the same
    verdicts."""
    wrapper = Path("/usr/bin/psql")
    assert wrapper.resolve().name == "pg_wrapper"
    direct = find_psql(None)
    assert re.fullmatch(r"/usr/lib/postgresql/\d+/bin/psql", direct), direct
    via_wrapper = dbgauge(db.dsn, str(SUITES), "--set", f"expected_db={db.name}",
                          "--psql", str(wrapper))
    assert verdicts(via_wrapper.stdout) == EXPECTED


def test_parallel_gives_the_same_verdicts(db: Scratch, tmp_path: Path) -> None:
    serial = dbgauge(db.dsn, str(SUITES), "--set", f"expected_db={db.name}", "-j", "1")
    parallel = dbgauge(db.dsn, str(SUITES), "--set", f"expected_db={db.name}", "-j", "4",
                       "--junit", str(tmp_path / "j4.xml"))
    assert parallel.returncode == serial.returncode == 1
    assert verdicts(parallel.stdout) == verdicts(serial.stdout) == EXPECTED
    assert "(-j 4)" in parallel.stdout
    names = [s.get("name") for s in ET.parse(tmp_path / "j4.xml").getroot()]
    assert names == sorted(names)  # JUnit keeps file order whatever finished first


def test_raw_tap_passthrough(db: Scratch) -> None:
    run = dbgauge(db.dsn, "--tap", "-j", "2", str(SUITES / "fail.sql"), str(SUITES / "pass.sql"))
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0] == f"# dbgauge pgtap: {SUITES / 'fail.sql'}"
    assert "not ok 2 - one is two" in lines and "ok 4 - now() exists" in lines
    assert lines.index("not ok 2 - one is two") < lines.index("ok 4 - now() exists")
    assert "Result: FAIL" in run.stderr and "Result" not in run.stdout


def test_runtests_xunit_with_fixtures(db: Scratch, tmp_path: Path) -> None:
    """pg_prove's mode: test functions already in the database, runtests(schema[, match])."""
    ddl = (XUNIT / "xunit_suite.sql").read_text().replace("BEGIN;", "")
    ddl = "\n".join(line for line in ddl.splitlines() if not line.startswith("SET "))
    db.sql(ddl)
    try:
        junit = tmp_path / "x.xml"
        run = dbgauge(db.dsn, "--runtests", "--schema", "dbgauge_xunit", "--junit", str(junit))
        assert run.returncode == 1, run.stdout + run.stderr
        assert "runtests('dbgauge_xunit') .. FAILED 7 tests, 2 failed" in run.stdout
        assert "        not ok 2 - this assertion fails" in run.stdout
        assert "Test died: P0001: boom from the fixture" in run.stdout
        case = ET.parse(junit).getroot().find(
            "testsuite/testcase[@name='dbgauge_xunit.test_c_fails']/failure")
        assert case is not None and "want: want" in (case.text or "")

        only = dbgauge(db.dsn, "-s", "dbgauge_xunit", "-x", "^test_(a|b|e)")
        assert only.returncode == 0, only.stdout + only.stderr
        assert "5 tests, 0" not in only.stdout and "ok     5 tests" in only.stdout

        url = urlsplit(db.dsn)
        prove = subprocess.run(
            ["pg_prove", "--host", str(url.hostname), "--port", str(url.port),
             "--username", "sandbox_admin", "--dbname", db.name, "--runtests",
             "--schema", "dbgauge_xunit"],
            env={**os.environ, "PGPASSWORD": db.password}, capture_output=True, text=True,
            timeout=60, check=False)
        assert prove.returncode != 0  # pg_prove agrees: it fails
    finally:
        db.sql("DROP SCHEMA dbgauge_xunit CASCADE")


def test_runtests_after_sourcing_each_file(db: Scratch) -> None:
    """Self-contained xUnit files: each creates its functions in its own session."""
    ok = dbgauge(db.dsn, "-R", "-s", "dbgauge_xunit_ok", str(XUNIT / "xunit_pass.sql"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "xunit_pass.sql .. ok     5 tests, 2 skipped" not in ok.stdout  # skips are in subtests
    assert re.search(r"xunit_pass\.sql \.+ ok\s+5 tests", ok.stdout)
    bad = dbgauge(db.dsn, "-s", "dbgauge_xunit", str(XUNIT / "xunit_suite.sql"))
    assert bad.returncode == 1
    assert db.sql("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE "
                  "'dbgauge_xunit%'")[0]["n"] == 0  # rolled back with the session


def test_install_pgtap_creates_and_drops_the_extension(sandbox: Sandbox) -> None:
    fresh = Scratch(sandbox, pgtap=False)
    try:
        without = dbgauge(fresh.dsn, str(SUITES / "pass.sql"))
        assert without.returncode == 1
        assert "function plan(integer) does not exist" in without.stdout
        assert "hint: pgTAP is not created in this database; add --install-pgtap" in without.stdout
        run = dbgauge(fresh.dsn, "--install-pgtap", str(SUITES / "pass.sql"))
        assert run.returncode == 0, run.stdout + run.stderr
        assert "created extension pgtap 1.2.0 for this run" in run.stderr
        assert "dropped extension pgtap again" in run.stderr
        assert "pgTAP 1.2.0, created for the run" in run.stdout
        assert fresh.sql("SELECT count(*) AS n FROM pg_extension WHERE extname = 'pgtap'"
                         )[0]["n"] == 0
        # failing tests still drop it again
        failing = dbgauge(fresh.dsn, "--install-pgtap", str(SUITES / "fail.sql"))
        assert failing.returncode == 1 and "dropped extension pgtap again" in failing.stderr
        assert fresh.sql("SELECT count(*) AS n FROM pg_extension WHERE extname = 'pgtap'"
                         )[0]["n"] == 0
    finally:
        fresh.drop()


def test_timeout_kills_a_hung_file(db: Scratch, tmp_path: Path) -> None:
    slow = tmp_path / "slow.sql"
    slow.write_text("SELECT plan(1);\nSELECT pg_sleep(20);\nSELECT ok(true);\n")
    run = dbgauge(db.dsn, "--timeout", "1", str(slow), str(SUITES / "pass.sql"), "-j", "2")
    assert run.returncode == 1
    assert verdicts(run.stdout) == {"slow.sql": "FAILED", "pass.sql": "ok"}
    assert "timed out after 1." in run.stdout
    busy = db.sql("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() "
                  "AND query LIKE '%pg_sleep(20)%' AND pid <> pg_backend_pid()")
    assert busy[0]["n"] == 0  # the server-side query was cancelled, not left running


def test_could_not_run_exits_2_without_secrets(db: Scratch, sandbox: Sandbox) -> None:
    wrong = db.dsn.replace(db.password, "not-the-password")
    run = dbgauge(wrong, str(SUITES / "pass.sql"))
    assert run.returncode == 2
    assert run.stderr.startswith("dbgauge: error: psql cannot run against 127.0.0.1:")
    assert "password authentication failed" in run.stderr
    assert "not-the-password" not in run.stderr and "Traceback" not in run.stderr
    closed = dbgauge(f"postgresql://u:pw12345@127.0.0.1:{sandbox.state.port('pg-primary') + 7}/x",
                     str(SUITES / "pass.sql"))
    assert closed.returncode == 2 and "pw12345" not in closed.stderr
    assert "Connection refused" in closed.stderr
    assert dbgauge(db.dsn, str(SUITES / "missing.sql")).returncode == 2
    assert dbgauge(db.dsn).returncode == 2
    assert dbgauge(db.dsn, "--ext", ".nothing", str(SUITES)).returncode == 2
    assert dbgauge(db.dsn, "--psql", "/nonexistent/psql", str(SUITES)).returncode == 2


def pg_prove(db: Scratch, *args: str) -> subprocess.CompletedProcess[str]:
    """Debian's pg_prove on the same database."""
    url = urlsplit(db.dsn)
    return subprocess.run(
        ["pg_prove", "-h", str(url.hostname), "-p", str(url.port), "-U", "sandbox_admin",
         "-d", db.name, *args], env={**os.environ, "PGPASSWORD": db.password},
        capture_output=True, text=True, timeout=60, check=False)


def listed(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("/")]


def test_pg_proves_options_mean_what_pg_prove_means(db: Scratch, tmp_path: Path) -> None:
    """pg_prove's flags, each beside Debian's pg_prove on the same files: which files -r,
    --ext and --reverse pick (-D lists them), -S/-P/-b reach psql, -v prints each test
    line, -Q only the summary; --timer, file order under -j, and a refused option."""
    (tmp_path / "sub").mkdir()
    for name in ("b.sql", "a.sql", "c.pg", "sub/d.sql"):
        (tmp_path / name).write_text((SUITES / "pass.sql").read_text())
    for flags in ([], ["-r"], ["--reverse"], ["-r", "--ext", ".sql"], ["--ext", "pg"]):
        ours = listed(dbgauge(db.dsn, "-D", *flags, str(tmp_path)).stdout)
        theirs = listed(pg_prove(db, "-D", *flags, str(tmp_path)).stdout)
        if "--ext" not in flags:  # pg_prove's default is .pg alone, dbgauge's .sql and .pg
            ours = [f for f in ours if f.endswith(".pg")]
        assert ours == theirs and theirs, flags
    psql = find_psql(None)
    common = ["-S", f"expected_db={db.name}", "-P", "null=NULL", "-b", psql]
    for name in ("variables.pg", "pass.sql", "fail.sql"):
        ours = dbgauge(db.dsn, *common, "-v", str(SUITES / name))
        theirs = pg_prove(db, *common, "-v", str(SUITES / name))
        assert ours.returncode == (theirs.returncode != 0), (name, ours.stdout, theirs.stdout)
        tests = re.compile(r"^(?:not )?ok \d+ - .*$", re.MULTILINE)
        assert tests.findall(ours.stdout) == tests.findall(theirs.stdout) != [], name
    quiet = dbgauge(db.dsn, "-Q", str(SUITES / "pass.sql"), str(SUITES / "fail.sql"))
    assert not VERDICT.findall(quiet.stdout) and "Result: FAIL" in quiet.stdout
    assert "fail.sql (tests" in quiet.stdout  # the failed file is in the summary
    assert "fail.sql" in pg_prove(db, "-Q", str(SUITES / "fail.sql")).stdout
    names = sorted(str(SUITES / n) for n in ("pass.sql", "todo_skip.sql", "meta.sql",
                                              "skip_all.sql"))
    timed = dbgauge(db.dsn, "-j", "4", "--timer", "-S", f"expected_db={db.name}", *names)
    assert re.findall(r"^\[\d\d:\d\d:\d\d\] (\S+) \.+ ok", timed.stdout, re.MULTILINE) == names
    refused = dbgauge(db.dsn, "--state", "save", str(SUITES / "pass.sql"))
    assert refused.returncode == 2 and "pg_prove's --state is not taken: dbgauge keeps no " \
        "state" in refused.stderr
