"""Run pgTAP test files the way pg_prove does: one `psql` session per file, in parallel.

Driving psql (rather than sending the file over a driver) is what makes suites behave as
they do under pg_prove: `\\i`, `\\ir`, `\\set`, `\\unset`, `\\pset`, `\\echo`,
`ON_ERROR_STOP` and `ON_ERROR_ROLLBACK` are psql's own. The flags are pg_prove's, so any
SQL error stops the file (psql exits 3) and fails it. The password travels in PGPASSWORD,
never on a command line. Lines are timestamped as they arrive (psql flushes after each
statement), which gives per-test times for JUnit.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolkit.db.version import parse_version
from toolkit.dsn import parse_dsn
from toolkit.errors import ConfigError, ConnectError, DbgaugeError, QueryError
from toolkit.pgtap.tap import TapResult, parse_tap
from toolkit.redact import redact, register_secret
from toolkit.sql import load_sql
from toolkit.targets import FanOut

DEFAULT_EXTENSIONS = (".sql", ".pg")
PSQL_FLAGS = ("--no-psqlrc", "--no-align", "--quiet", "--pset", "pager=off",
              "--pset", "tuples_only=true", "--set", "ON_ERROR_STOP=1")
KILL_GRACE = 5.0
DEBIAN_CLIENTS = Path("/usr/lib/postgresql")  # postgresql-client-<major>: <major>/bin/psql
DEBIAN_SYSCONFDIR = "/etc/postgresql-common"  # where pg_wrapper points libpq's pg_service.conf
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PSQL_ERROR = re.compile(r"^(?:psql:[^ ]*:\d+: )?(?:ERROR|FATAL|PANIC):")
_PSQL_LOCATION = re.compile(r"^psql:.*?:(\d+): ")
_PSQL_EXIT = {1: "psql failed", 2: "the connection to the server was lost",
              3: "SQL error (ON_ERROR_STOP)"}


@dataclass(frozen=True)
class PsqlTarget:
    """Where psql connects: a libpq conninfo without the password, plus the password."""

    conninfo: str
    password: str | None
    address: str
    dbname: str


def _conninfo_value(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def psql_target(dsn: str) -> PsqlTarget:
    """Turn a postgresql:// DSN into psql's conninfo (password kept apart, registered for
    redaction so it can never show up in a message)."""
    params = parse_dsn(dsn)
    if params.family != "postgres":
        raise ConfigError("pgtap needs a postgresql:// DSN, got a MySQL-family one")
    register_secret(params.password)
    dbname = params.dbname or params.user
    pairs = [("host", params.host), ("port", str(params.port)), ("user", params.user),
             ("dbname", dbname)]
    keys = {k for k, _ in pairs}
    pairs += [(k, v) for k, v in params.options if k not in keys and k != "password"]
    if "application_name" not in {k for k, _ in pairs}:
        pairs.append(("application_name", "dbgauge-pgtap"))
    conninfo = " ".join(f"{k}={_conninfo_value(v)}" for k, v in pairs)
    return PsqlTarget(conninfo, params.password, params.address, dbname)


def parse_assignments(values: Sequence[str], what: str) -> tuple[tuple[str, str], ...]:
    """`--set VAR=VALUE` strings -> pairs, refusing names psql would not accept."""
    out: list[tuple[str, str]] = []
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not _VAR_NAME.match(name):
            raise ConfigError(f"{what} {item!r}: expected NAME=VALUE with NAME made of "
                              "letters, digits and _")
        out.append((name, value))
    return tuple(out)


def normalise_extensions(values: Sequence[str]) -> tuple[str, ...]:
    exts = tuple(v if v.startswith(".") else f".{v}" for v in values if v)
    return exts or DEFAULT_EXTENSIONS


def discover(paths: Sequence[str], extensions: Sequence[str]) -> list[Path]:
    """Files named on the command line run whatever their extension; directories are
    searched recursively (hidden ones skipped) for the extensions, in sorted order."""
    found: list[Path] = []
    seen: set[Path] = set()
    exts = tuple(e.lower() for e in extensions)
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            candidates = [path]
        elif path.is_dir():
            candidates = sorted(
                p for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in exts
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            raise ConfigError(f"test path {raw!r} does not exist")
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    if not found:
        raise ConfigError(f"no test files ({', '.join(exts)}) under "
                          + ", ".join(repr(p) for p in paths)
                          + "; use --ext to pick other extensions")
    return found


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


def find_psql(psql: str | None, debian_root: Path = DEBIAN_CLIENTS) -> str:
    """The psql to run: --psql as given, else psql on PATH, looking through Debian's
    pg_wrapper to the binary it would run."""
    found = shutil.which(psql or "psql")
    if found is None:
        raise ConfigError(f"psql not found ({psql or 'psql'} is not on PATH): install the "
                          "PostgreSQL client (Debian: postgresql-client) or pass --psql PATH")
    return found if psql is not None else unwrap_psql(found, debian_root)


def unwrap_psql(path: str, debian_root: Path = DEBIAN_CLIENTS) -> str:
    """On Debian and Ubuntu, psql on PATH is postgresql-common's pg_wrapper: a Perl script
    that picks a client version and execs it, which costs about 20 ms per file (as much
    as psql itself on a small test file). For psql, pg_wrapper always runs the newest
    installed client (pg_wrapper(1)), so run that binary directly; `_env` sets the one
    variable pg_wrapper would (PGSYSCONFDIR)."""
    if Path(path).resolve().name != "pg_wrapper":
        return path
    versions: list[tuple[tuple[int, ...], Path]] = []
    try:
        for entry in debian_root.iterdir():
            binary = entry / "bin" / "psql"
            if re.fullmatch(r"\d+(?:\.\d+)?", entry.name) and os.access(binary, os.X_OK):
                versions.append((parse_version(entry.name), binary))
    except OSError:
        return path
    return str(max(versions)[1]) if versions else path


def _env(target: PsqlTarget, psql: str) -> dict[str, str]:
    env = dict(os.environ)
    if target.password is not None:
        env["PGPASSWORD"] = target.password
    if Path(psql).is_relative_to(DEBIAN_CLIENTS):
        env.setdefault("PGSYSCONFDIR", DEBIAN_SYSCONFDIR)  # as pg_wrapper does
    return env


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
            stdout=subprocess.PIPE, stderr=err_file.handle, env=_env(target, options.psql),
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
        import tempfile

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


@dataclass(frozen=True)
class ServerFacts:
    """What the pre-flight learnt: proof that psql can connect, and versions."""

    server_version: str
    pgtap_version: str | None


def preflight(target: PsqlTarget, psql: str) -> ServerFacts:
    """One short psql session before the run, so a wrong DSN, password or psql is one
    clear error (exit 2) instead of every file failing the same way."""
    argv = [psql, "--no-psqlrc", "--no-align", "--tuples-only", "--quiet",
            "--set", "ON_ERROR_STOP=1", "--dbname", target.conninfo,
            "--command", load_sql("postgres", "pgtap_preflight")]
    try:
        proc = subprocess.run(argv, capture_output=True, env=_env(target, psql), timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:
        raise ConfigError(f"could not start psql ({psql}): {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise ConnectError(f"psql did not connect to {target.address} within 60s") from None
    out = proc.stdout.decode("utf-8", errors="replace").strip()
    if proc.returncode != 0:
        text = redact(proc.stderr.decode("utf-8", errors="replace"))
        why = " ".join(ln.strip() for ln in text.splitlines() if ln.strip())
        why = why.removeprefix("psql: error: ")
        raise ConnectError(f"psql cannot run against {target.address}/{target.dbname}: "
                           f"{why or f'exit status {proc.returncode}'}")
    version, _, pgtap = out.partition("|")
    return ServerFacts(version.strip(), pgtap.strip() or None)


@dataclass
class PgtapInstall:
    """What --install-pgtap did (filled in while the run goes on): notes for the user and
    the version it created, if it created the extension."""

    notes: list[str]
    created_version: str | None = None


@contextmanager
def pgtap_for_run(dsn: str, install: bool) -> Iterator[PgtapInstall]:
    """With `install`, create the pgtap extension when the database lacks it and drop it
    again after the run, even when the run fails."""
    state = PgtapInstall([])
    if not install:
        yield state
        return
    from toolkit.db import connect_dsn

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
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pgtap-preflight") as side:
        pre = side.submit(preflight, target, options.psql)
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
