"""Runner pieces that need no server: DSN to psql, discovery, the psql command line, why a
file failed, the text report and the JUnit rendering."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.pgtap.files import (
    discover,
    normalise_extensions,
    parse_assignments,
    plan_run,
)
from dbgauge.toolkit.pgtap.psql import (
    DEBIAN_SYSCONFDIR,
    PSQL_FLAGS,
    find_psql,
    psql_env,
    psql_target,
    unwrap_psql,
)
from dbgauge.toolkit.pgtap.runner import (
    FileResult,
    Job,
    RunOptions,
    Runtests,
    psql_command,
)
from dbgauge.toolkit.pgtap.tap import parse_tap
from dbgauge.toolkit.render import junit
from dbgauge.toolkit.render import pgtap as report

TAP = Path(__file__).resolve().parents[1] / "fixtures" / "pgtap" / "tap"
STARTED = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def result(name: str, tap_file: str | None = None, lines: list[str] | None = None,
           exit_code: int | None = 0, stderr: str = "", timed_out: bool = False) -> FileResult:
    text = lines if lines is not None else (TAP / f"{tap_file}.tap").read_text().splitlines()
    return FileResult(name, parse_tap(text), tuple(text), stderr, exit_code, 0.25, STARTED,
                      timed_out=timed_out)


def test_psql_target_keeps_the_password_out_of_the_conninfo() -> None:
    target = psql_target("postgresql://ci:s3cr%27et@db.example:6543/app?sslmode=require")
    assert target.password == "s3cr'et"
    assert "s3cr" not in target.conninfo
    assert target.conninfo == ("host='db.example' port='6543' user='ci' dbname='app' "
                               "sslmode='require' application_name='dbgauge-pgtap'")
    odd = psql_target("postgresql://u@h/it's")
    assert "dbname='it\\'s'" in odd.conninfo
    with pytest.raises(ConfigError, match="postgresql://"):
        psql_target("mysql://u@h/db")


def test_assignments_and_extensions() -> None:
    assert parse_assignments(["a=1", "b_2=x=y", "c="], "--set") == (
        ("a", "1"), ("b_2", "x=y"), ("c", ""))
    for bad in ("novalue", "1a=2", "a b=1"):
        with pytest.raises(ConfigError, match="NAME=VALUE"):
            parse_assignments([bad], "--set")
    assert normalise_extensions([]) == (".sql", ".pg")
    assert normalise_extensions(["pgtap", ".t"]) == (".pgtap", ".t")


def test_discovery(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    for name in ("a.sql", "b/c.pg", "b/d.txt", ".hidden/e.sql", "b/a.SQL"):
        (tmp_path / name).write_text("")
    found = discover([str(tmp_path)], (".sql", ".pg"), recurse=True)  # pg_prove -r
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.sql", "b/a.SQL", "b/c.pg"]
    top = discover([str(tmp_path)], (".sql", ".pg"))  # as pg_prove without -r
    assert [p.relative_to(tmp_path).as_posix() for p in top] == ["a.sql"]
    # a file named explicitly runs whatever its extension; duplicates run once
    explicit = discover([str(tmp_path / "b/d.txt"), str(tmp_path / "a.sql"), str(tmp_path)],
                        (".sql",), recurse=True)
    assert [p.name for p in explicit] == ["d.txt", "a.sql", "a.SQL"]
    with pytest.raises(ConfigError, match="does not exist"):
        discover([str(tmp_path / "missing")], (".sql",))
    with pytest.raises(ConfigError, match="no test files"):
        discover([str(tmp_path / "b")], (".nothing",))


def test_psql_command_uses_pg_prove_flags() -> None:
    target = psql_target("postgresql://ci:pw@127.0.0.1:5432/app")
    options = RunOptions("/usr/bin/psql", (("v", "1"),), (("null", "NULL"),))
    argv, stdin = psql_command(target, options, Job("t.sql", Path("t.sql")))
    assert argv[:len(PSQL_FLAGS) + 1] == ["/usr/bin/psql", *PSQL_FLAGS]
    assert PSQL_FLAGS == ("--no-psqlrc", "--no-align", "--quiet", "--pset", "pager=off",
                          "--pset", "tuples_only=true", "--set", "ON_ERROR_STOP=1")
    assert argv[-2:] == ["--file", "t.sql"] and stdin == ""
    assert argv[argv.index("v=1") - 1:argv.index("v=1") + 1] == ["--set", "v=1"]
    assert "pw" not in " ".join(argv)
    xunit = RunOptions("psql", runtests=Runtests("test", None))
    argv, stdin = psql_command(target, xunit, Job("runtests('test')", None))
    assert argv[-2:] == ["--file", "-"]
    assert "dbgauge_schema=test" in argv and "dbgauge_match=^test" in argv
    assert stdin == "SELECT * FROM runtests(:'dbgauge_schema'::name, :'dbgauge_match'::text);\n"
    assert Runtests("t", "^x").call_text == "runtests('t', '^x')"


def test_a_run_is_planned_and_checked_before_anything_runs(tmp_path: Path) -> None:
    """The command line's usage errors come before any session: what `pgtap run` plans."""
    psql = _executable(tmp_path / "bin" / "psql")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.sql").write_text("")
    dsn = "postgresql://ci@127.0.0.1/app"
    plan = plan_run(dsn, [str(tmp_path / "t")], variables=["v=1"], psets=["null=NULL"],
                    timeout=5.0, psql=str(psql))
    assert plan.jobs == (Job(str(tmp_path / "t" / "a.sql"), tmp_path / "t" / "a.sql"),)
    assert plan.options == RunOptions(str(psql), (("v", "1"),), (("null", "NULL"),), 5.0)
    xunit = plan_run(dsn, [], runtests=Runtests("test", None), psql=str(psql))
    assert xunit.jobs == (Job("runtests('test')", None),)
    assert xunit.options.runtests == Runtests("test", None)
    with pytest.raises(ConfigError, match="nothing to run"):
        plan_run(dsn, [], psql=str(psql))
    with pytest.raises(ConfigError, match="PostgreSQL DSN"):
        plan_run("mysql://u@h/db", [str(tmp_path / "t")], psql=str(psql))
    with pytest.raises(ConfigError, match="--pset 'x': expected NAME=VALUE"):
        plan_run(dsn, [str(tmp_path / "t")], psets=["x"], psql=str(psql))
    with pytest.raises(ConfigError, match="psql not found"):
        plan_run(dsn, [str(tmp_path / "t")], psql=str(tmp_path / "missing"))


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_debian_pg_wrapper_is_looked_through_to_the_newest_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian's psql is a symlink to pg_wrapper (Perl, ~20 ms a start), which always runs
    the newest installed psql: the runner runs that binary itself."""
    root = tmp_path / "lib" / "postgresql"
    for version in ("9.6", "13", "15"):
        _executable(root / version / "bin" / "psql")
    (root / "16").mkdir()  # a server-only directory: no client binary, not chosen
    (root / "README").write_text("")
    wrapper = _executable(tmp_path / "share" / "postgresql-common" / "pg_wrapper")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "psql").symlink_to(wrapper)
    assert unwrap_psql(str(bin_dir / "psql"), root) == str(root / "15" / "bin" / "psql")
    # Any other psql (a source build, a wrapper of the user's own) is run as found.
    other = _executable(tmp_path / "opt" / "psql")
    assert unwrap_psql(str(other), root) == str(other)
    # No client under the root: the wrapper itself still works, so it is kept.
    assert unwrap_psql(str(bin_dir / "psql"), tmp_path / "empty") == str(bin_dir / "psql")
    monkeypatch.setenv("PATH", str(bin_dir))
    assert find_psql(None, root) == str(root / "15" / "bin" / "psql")
    assert find_psql("psql", root) == str(bin_dir / "psql")  # --psql is taken as given


def test_psql_env_carries_the_password_and_pg_wrappers_sysconfdir(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGSYSCONFDIR", raising=False)
    target = psql_target("postgresql://ci:pw@db/app")
    debian = psql_env(target, "/usr/lib/postgresql/15/bin/psql")
    assert debian["PGPASSWORD"] == "pw"
    assert debian["PGSYSCONFDIR"] == DEBIAN_SYSCONFDIR
    assert "PGSYSCONFDIR" not in psql_env(target, "/opt/pg/bin/psql")
    monkeypatch.setenv("PGSYSCONFDIR", "/etc/mine")
    assert psql_env(target, "/usr/lib/postgresql/15/bin/psql")["PGSYSCONFDIR"] == "/etc/mine"


def test_problems_name_every_reason() -> None:
    assert result("ok.sql", "plan_at_end").problems == ()
    failed = result("f.sql", "fail")
    assert failed.problems == ("failed 1/3 test(s): 2",) and failed.file_problems == ()
    stderr = ('psql:t/x.sql:6: ERROR:  relation "nope" does not exist\n'
              "LINE 1: SELECT * FROM nope;\n                      ^\n")
    sql_error = result("x.sql", "sql_error", exit_code=3, stderr=stderr)
    assert sql_error.problems == (
        'SQL error at line 6 (psql exited 3): ERROR:  relation "nope" does not exist',
        "bad plan: planned 4 test(s) but ran 2")
    assert sql_error.sql_errors[0].count("\n") == 2
    lost = result("l.sql", lines=["1..1"], exit_code=2,
                  stderr="server closed the connection unexpectedly\n")
    assert lost.problems[0] == ("psql exited 2: the connection to the server was lost: "
                                "server closed the connection unexpectedly")
    slow = result("s.sql", lines=["1..1"], exit_code=None, timed_out=True)
    assert slow.problems[0] == "timed out after 0.2s (query cancelled, psql stopped)"
    assert result("b.sql", "bailout").problems == ("Bail out! fixture database is not prepared",)


def test_report_lines_and_summary() -> None:
    results = [result("t/ok.sql", "todo_skip"), result("t/fail.sql", "fail"),
               result("t/skip.sql", "skip_all")]
    width = report.name_width([r.name for r in results])
    assert report.file_line(results[0], width) == (
        "t/ok.sql .... ok     5 tests, 2 skipped, 2 todo  0.25s")
    failed = report.file_line(results[1], width).splitlines()
    assert failed[0] == "t/fail.sql .. FAILED 3 tests, 1 failed  0.25s"
    assert "    not ok 2 - one is two" in failed and "    #         want: 2" in failed
    assert "skipped: no replica in this environment" in report.file_line(results[2], width)
    summary = report.summary(results, 1.5, 4, None).splitlines()
    assert summary[-2] == "Files=3, Tests=8, Failed files=1, 1.50s wall (-j 4)"
    assert summary[-1] == "Result: FAIL"
    assert "Result: PASS" in report.summary(results[:1], 1.0, 1, None)


def test_runtests_failure_text_carries_subtest_diagnostics() -> None:
    xunit = result("runtests('dbgauge_xunit')", "runtests")
    lines = report.file_line(xunit, 30)
    assert "        not ok 2 - this assertion fails" in lines
    assert "        # Test died: P0001: boom from the fixture" in lines


def test_junit_xml() -> None:
    results = [result("t/fail.sql", "fail"), result("t/todo.sql", "todo_skip"),
               result("t/err.sql", "sql_error", exit_code=3,
                      stderr="psql:t/err.sql:6: ERROR:  boom\x01\n"),
               result("t/skip.sql", "skip_all"), result("rt", "runtests")]
    root = ET.fromstring(junit.render(results))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("19", "3", "1")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["t/fail.sql", "t/todo.sql", "t/err.sql",
                                               "t/skip.sql", "rt"]
    fail = suites[0]
    assert (fail.get("tests"), fail.get("failures"), fail.get("time")) == ("3", "1", "0.250")
    assert fail.get("timestamp") == "2024-01-02T03:04:05"
    case = fail.findall("testcase")[1]
    assert case.get("name") == "one is two" and case.get("classname") == "t.fail"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "not ok 2 - one is two"
    assert "have: 1" in (failure.text or "") and "want: 2" in (failure.text or "")
    skipped = [c.find("skipped") for c in suites[1].findall("testcase")]
    assert [s.get("message") if s is not None else None for s in skipped] == [
        None, "TODO (failed as expected): not implemented yet", "SKIP: needs a replica",
        "SKIP: needs a replica", None]
    err = suites[2].find("testcase[@name='(file)']/error")
    assert err is not None and "SQL error at line 6" in (err.get("message") or "")
    assert "\ufffd" in (suites[2].findtext("system-err") or "")  # control char replaced
    assert suites[3].find("testcase/skipped") is not None
    died = suites[4].find("testcase[@name='dbgauge_xunit.test_d_dies']/failure")
    assert died is not None and "Test died: P0001: boom" in (died.text or "")


def test_junit_file_errors_are_usage_errors(tmp_path: Path) -> None:
    junit.check_directory(tmp_path / "out.xml")
    with pytest.raises(ConfigError, match="directory does not exist"):
        junit.check_directory(tmp_path / "missing" / "out.xml")
    (tmp_path / "taken").mkdir()
    with pytest.raises(ConfigError, match=r"cannot write --junit .*taken: Is a directory"):
        junit.write([result("t/fail.sql", "fail")], tmp_path / "taken")
    junit.write([result("t/fail.sql", "fail")], tmp_path / "out.xml")
    assert ET.parse(tmp_path / "out.xml").getroot().get("tests") == "3"


def test_pg_proves_other_options_are_refused_saying_what_to_use() -> None:
    """Every pg_prove option dbgauge does not take is refused with its own line (exit 2),
    never click's bare 'no such option'; --nocolor and --count are accepted."""
    from click.testing import CliRunner

    from dbgauge.cli import cli
    from dbgauge.cli.pg_prove import REFUSED
    from tests.helpers.dsns import no_known_secrets

    suite = str(Path(__file__).parents[1] / "fixtures" / "pgtap" / "suites" / "pass.sql")
    with no_known_secrets():  # another test's secret would mask a piece of the advice
        _each_refused(suite, REFUSED)
        ok = CliRunner().invoke(cli, ["pgtap", "run", "--nocolor", "--count", "-D", suite])
    assert ok.exit_code == 0 and ok.output == suite + "\n"


def _each_refused(suite: str, refused: dict[tuple[str, ...], tuple[bool, str]]) -> None:
    from click.testing import CliRunner

    from dbgauge.cli import cli

    for names, (takes_value, advice) in refused.items():
        for name in names:
            args = [name, "x"] if takes_value else [name]
            result = CliRunner().invoke(cli, ["pgtap", "run", *args, "-D", suite])
            assert result.exit_code == 2, (name, result.output)
            assert f"is not taken: {advice}" in result.output, name


def _result(name: str, *lines: str) -> FileResult:
    from datetime import UTC, datetime

    from dbgauge.toolkit.pgtap.tap import parse_tap

    return FileResult(name, parse_tap(lines), lines, "", 0, 0.01, datetime.now(UTC))


def test_file_lines_come_in_file_order_and_trap_summarises(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Under -j the files finish in any order: their lines are printed in file order; -v
    adds every TAP line, -o the comments, -Q nothing per file; --trap's Ctrl-C prints the
    summary of the files finished so far (exit 1)."""
    from dbgauge.cli.pgtap import _Shown
    from dbgauge.toolkit.render.pgtap import Display
    from dbgauge.toolkit.render.progress import Progress

    tap = ("1..1", "# a comment", "ok 1 - fine")
    shown = _Shown(Progress("file", quiet=True), ["a.sql", "b.sql", "c.sql"], False, Display())
    shown.done(2, _result("c.sql", *tap))
    shown.done(1, _result("b.sql", *tap))
    assert capsys.readouterr().out == ""  # a.sql is not done: nothing can be printed yet
    shown.done(0, _result("a.sql", *tap))
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "a.sql", "b.sql", "c.sql"]
    for display, expect in ((Display(verbose=True), ["a.sql ..", *tap]),
                            (Display(comments=True), ["# a comment"]),
                            (Display(summary_only=True), [])):
        one = _Shown(Progress("file", quiet=True), ["a.sql"], False, display)
        one.done(0, _result("a.sql", *tap))
        out = capsys.readouterr().out.splitlines()
        assert out[:len(expect)] == expect and len(out) == len(expect) + (
            0 if display.summary_only else 1), (display, out)
    trapped = _Shown(Progress("file", quiet=True), ["a.sql", "b.sql"], False, Display())
    trapped.done(0, _result("a.sql", "1..2", "ok 1", "not ok 2"))
    capsys.readouterr()
    assert trapped.interrupted() == 1
    out = capsys.readouterr().out
    assert "Interrupted: 1 file(s) finished" in out and "Files=1, Tests=2, Failed files=1" in out
