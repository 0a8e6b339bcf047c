"""Run pgTAP test files the way pg_prove does: one `psql` session per file, in parallel.

Driving psql (`toolkit.pgtap.psql`) rather than sending the file over a driver is what
makes suites behave as they do under pg_prove: `\\i`, `\\ir`, `\\set`, `\\unset`,
`\\pset`, `\\echo`, `ON_ERROR_STOP` and `ON_ERROR_ROLLBACK` are psql's own. The flags
are pg_prove's, so any SQL error stops the file (psql exits 3) and fails it. Lines are
timestamped as they arrive (psql flushes after each statement), which gives per-test
times for JUnit.
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import DbgaugeError, QueryError
from dbgauge.toolkit.pgtap.psql import (
    PSQL_FLAGS,
    PsqlTarget,
    ServerFacts,
    preflight,
    psql_env,
    psql_target,
)
from dbgauge.toolkit.pgtap.tap import TapResult, parse_tap
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.sql import load_sql
from dbgauge.toolkit.targets import FanOut
from dbgauge.toolkit.write_guard import check_writable

KILL_GRACE = 5.0
_PSQL_ERROR = re.compile(r"^(?:psql:[^ ]*:\d+: )?(?:ERROR|FATAL|PANIC):")
_PSQL_LOCATION = re.compile(r"^psql:.*?:(\d+): ")
_PSQL_EXIT = {1: "psql failed", 2: "the connection to the server was lost",
              3: "SQL error (ON_ERROR_STOP)"}


@dataclass(frozen=True)
class Runtests:
    """xUnit mode: call runtests() (optionally after sourcing a file that creates the
    test functions in the same session)."""

    schema: str | None
    match: str | None

    @property
    def call_text(self) -> str:
        """How the call reads in reports: runtests('test', '^test_')."""
        args = [repr(a) for a in (self.schema, self.match) if a is not None]
        return f"runtests({', '.join(args)})"


@dataclass(frozen=True)
class RunOptions:
    psql: str
    variables: tuple[tuple[str, str], ...] = ()
    psets: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    runtests: Runtests | None = None


@dataclass(frozen=True)
class Job:
    """One psql session: a test file, or runtests() with no file (`path` None)."""

    name: str
    path: Path | None


@dataclass(frozen=True)
class FileResult:
    """The outcome of one psql session, with the reasons it failed, if any."""

    name: str
    tap: TapResult
    lines: tuple[str, ...]
    stderr: str
    exit_code: int | None
    elapsed: float
    started: datetime
    timed_out: bool = False
    start_error: str | None = None

    @property
    def sql_errors(self) -> tuple[str, ...]:
        """psql's ERROR/FATAL lines (with their DETAIL/HINT/CONTEXT continuation)."""
        out: list[str] = []
        lines = self.stderr.splitlines()
        for i, line in enumerate(lines):
            if _PSQL_ERROR.match(line):
                block = [line]
                for follow in lines[i + 1:]:
                    if follow.startswith(("DETAIL:", "HINT:", "CONTEXT:", "LINE ", " ")):
                        block.append(follow)
                    else:
                        break
                out.append("\n".join(block))
        return tuple(out)

    @property
    def file_problems(self) -> tuple[str, ...]:
        """Failures that belong to the file rather than to one test: psql exit status,
        timeout, bail-out, plan and parse errors."""
        out: list[str] = []
        if self.start_error is not None:
            out.append(self.start_error)
        if self.timed_out:
            out.append(f"timed out after {self.elapsed:.1f}s (query cancelled, psql stopped)")
        elif self.exit_code not in (0, None):
            errors = self.sql_errors
            if errors:
                m = _PSQL_LOCATION.match(errors[0])
                where = f" at line {m.group(1)}" if m else ""
                first = errors[0].splitlines()[0][m.end() if m else 0:]
                out.append(f"SQL error{where} (psql exited {self.exit_code}): {first}")
            else:
                why = _PSQL_EXIT.get(self.exit_code, "psql failed")
                detail = _last_line(self.stderr)
                out.append(f"psql exited {self.exit_code}: {why}"
                           + (f": {detail}" if detail else ""))
        if self.tap.bailout is not None:
            out.append(f"Bail out! {self.tap.bailout}".rstrip())
        out.extend(self.tap.errors)
        return tuple(out)

    @property
    def problems(self) -> tuple[str, ...]:
        """Why the file failed, most fundamental first; empty when it passed."""
        failed = self.tap.failed
        if not failed:
            return self.file_problems
        numbers = ", ".join(str(t.number) for t in failed)
        return (*self.file_problems,
                f"failed {len(failed)}/{len(self.tap.tests)} test(s): {numbers}")

    @property
    def passed(self) -> bool:
        return not self.problems


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def psql_command(target: PsqlTarget, options: RunOptions, job: Job) -> tuple[list[str], str]:
    """The argv (pg_prove's flags) and the stdin text for one job."""
    argv = [options.psql, *PSQL_FLAGS, "--dbname", target.conninfo]
    for name, value in options.psets:
        argv += ["--pset", f"{name}={value}"]
    for name, value in options.variables:
        argv += ["--set", f"{name}={value}"]
    stdin = ""
    if job.path is not None:
        argv += ["--file", str(job.path)]
    if options.runtests is not None:
        spec = options.runtests
        argv += ["--set", f"dbgauge_match={spec.match or '^test'}"]
        if spec.schema is not None:
            argv += ["--set", f"dbgauge_schema={spec.schema}"]
        stdin = load_sql("postgres", "pgtap_runtests_schema" if spec.schema is not None
                         else "pgtap_runtests") + ";\n"
        argv += ["--file", "-"]
    return argv, stdin


def run_job(target: PsqlTarget, options: RunOptions, job: Job,
            stop: threading.Event | None = None) -> FileResult:
    """Run one job to completion; never raises for test problems (they are in the result).
    A set `stop` (the pre-flight failed) means: do not start."""
    started = datetime.now(UTC)
    if stop is not None and stop.is_set():
        return FileResult(job.name, parse_tap([]), (), "", None, 0.0, started,
                          start_error="not run: psql could not connect")
    argv, stdin = psql_command(target, options, job)
    begin = time.monotonic()
    lines: list[str] = []
    times: list[float] = []
    timed_out = threading.Event()
    err_file = _TempText()
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=err_file.handle, env=psql_env(target, options.psql),
        )
    except OSError as exc:
        err_file.close()
        return FileResult(job.name, parse_tap([]), (), "", None, 0.0, started,
                          start_error=f"could not start psql: {exc.strerror or exc}")
    timer = None
    if options.timeout is not None:
        def interrupt() -> None:
            # SIGINT makes psql send the server a cancel request (so the backend stops
            # too) and exit; SIGKILL only if it does not within KILL_GRACE seconds.
            timed_out.set()
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(KILL_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
        timer = threading.Timer(options.timeout, interrupt)
        timer.daemon = True
        timer.start()
    try:
        if stdin and proc.stdin is not None:
            try:
                proc.stdin.write(stdin.encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
            times.append(time.monotonic() - begin)
        code = proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = redact(err_file.read())
    elapsed = time.monotonic() - begin
    return FileResult(job.name, parse_tap(lines, times), tuple(lines), stderr,
                      None if timed_out.is_set() else code, elapsed, started,
                      timed_out=timed_out.is_set())


class _TempText:
    """stderr goes to an unnamed temporary file: reading two pipes at once could deadlock."""

    def __init__(self) -> None:
        self.handle = tempfile.TemporaryFile()  # noqa: SIM115 - closed by read()/close()

    def read(self) -> str:
        self.handle.seek(0)
        data = self.handle.read().decode("utf-8", errors="replace")
        self.handle.close()
        return data

    def close(self) -> None:
        self.handle.close()


def run_all(target: PsqlTarget, options: RunOptions, jobs: Sequence[Job], parallel: int,
            on_done: Callable[[int, FileResult], None] | None = None,
            stop: threading.Event | None = None) -> list[FileResult]:
    """Run every job with at most `parallel` psql sessions at once; results in job order.
    `on_done(index, result)` is called in this thread as each job finishes. On an
    interrupt (Ctrl-C) jobs not yet started are dropped rather than run."""
    def finished(index: int, outcome: FileResult | Exception) -> None:
        if on_done is not None and isinstance(outcome, FileResult):
            on_done(index, outcome)

    with FanOut[Job, FileResult](parallel, "pgtap") as pool:
        outcomes = pool.map(jobs, lambda job: run_job(target, options, job, stop),
                            on_done=finished)
    results: list[FileResult] = []
    for outcome in outcomes:
        if isinstance(outcome, Exception):
            raise outcome
        results.append(outcome)
    return results


@dataclass
class PgtapInstall:
    """What --install-pgtap did (filled in while the run goes on): notes for the user and
    the version it created, if it created the extension."""

    notes: list[str]
    created_version: str | None = None


@contextmanager
def pgtap_for_run(dsn: str, install: bool) -> Iterator[PgtapInstall]:
    """With `install`, create the pgtap extension when the database lacks it and drop it
    again after the run, even when the run fails; never on a read-only server (a standby,
    default_transaction_read_only), where the run needs pgTAP installed on the primary."""
    state = PgtapInstall([])
    if not install:
        yield state
        return
    conn = connect_dsn(dsn, query_timeout=300)
    try:
        rows = conn.query("pgtap_extension_status")
        found = rows[0] if rows else {}
        if found.get("installed_version") is None:
            if found.get("default_version") is None:
                raise QueryError(
                    f"pgTAP is not available on the server at {_where(dsn)}: install the "
                    "server package (Debian: postgresql-<major>-pgtap, e.g. "
                    "postgresql-15-pgtap) on the database host, then rerun")
            check_writable(conn, "create extension pgtap (--install-pgtap)", _where(dsn),
                           override=None)
            conn.query("pgtap_create_extension")
            state.created_version = str(found["default_version"])
            state.notes.append(f"created extension pgtap {state.created_version} for this run")
    finally:
        conn.close()
    try:
        yield state
    finally:
        if state.created_version is not None:
            try:
                conn = connect_dsn(dsn, query_timeout=300)
                try:
                    conn.query("pgtap_drop_extension")
                finally:
                    conn.close()
                state.notes.append("dropped extension pgtap again")
            except DbgaugeError as exc:
                state.notes.append(f"could not drop extension pgtap after the run: {exc}")


def _where(dsn: str) -> str:
    params = parse_dsn(dsn)
    return f"{params.address}/{params.dbname or params.user}"


@dataclass(frozen=True)
class RunReport:
    """A finished run: per-file results in file order, wall time, server facts."""

    results: tuple[FileResult, ...]
    wall: float
    facts: ServerFacts

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)


def execute(dsn: str, options: RunOptions, jobs: Sequence[Job], parallel: int, *,
            install_pgtap: bool = False,
            on_done: Callable[[int, FileResult], None] | None = None,
            on_note: Callable[[str], None] | None = None) -> RunReport:
    """Run the jobs. The pre-flight runs alongside the first files rather than before
    them (it would add a connection's latency to every run): if it fails, files not yet
    started are not started, their results are not reported, and its error is raised."""
    target = psql_target(dsn)
    note = on_note or (lambda _text: None)
    stop = threading.Event()
    started = time.monotonic()
    with FanOut[None, ServerFacts](1, "pgtap-preflight") as side:
        pre = side.submit(lambda: preflight(target, options.psql))
        pre.add_done_callback(lambda f: stop.set() if f.exception() is not None else None)

        def done(index: int, result: FileResult) -> None:
            if not result.lines and not result.passed and pre.exception() is not None:
                return  # the pre-flight's error says it once, for every file
            if on_done is not None:
                on_done(index, result)

        with pgtap_for_run(dsn, install_pgtap) as installed:
            for text in installed.notes:
                note(text)
            shown = len(installed.notes)
            results = run_all(target, options, jobs, parallel, done, stop)
        for text in installed.notes[shown:]:
            note(text)
        facts = pre.result()  # raises the pre-flight's ConnectError/ConfigError
    if installed.created_version is not None:
        facts = ServerFacts(facts.server_version,
                            f"{installed.created_version}, created for the run")
    return RunReport(tuple(results), time.monotonic() - started, facts)
