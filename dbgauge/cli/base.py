"""What every command shares: the --config option, reading a password file, durations,
and the one table that turns results and expected failures into exit codes.

Expected failures (DbgaugeError) print one line to stderr and exit with the code this
table gives their type; they never show a traceback. Exceptions carry no exit codes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from dbgauge.toolkit import ENV_CONFIG
from dbgauge.toolkit.errors import (
    CheckFailed,
    ConfigError,
    ConnectError,
    DbgaugeError,
    MissingBinaryError,
    QueryError,
    SandboxError,
    WriteRefused,
)
from dbgauge.toolkit.redact import redact, register_secret
from dbgauge.toolkit.result import Status
from dbgauge.toolkit.units import parse_duration

if TYPE_CHECKING:
    from dbgauge.toolkit.render.progress import Every

# No short letter: -c is --critical wherever dbgauge takes thresholds (check_postgres' and
# the monitoring plugins' -c), so it means nothing else anywhere.
CONFIG_OPTION = click.option(
    "--config", "config_path", envvar=ENV_CONFIG, metavar="FILE",
    help=f"YAML config file (default: ${ENV_CONFIG}).",
)

def _compat(_ctx: click.Context, _param: click.Parameter,
            value: tuple[str, ...]) -> tuple[str, ...] | None:
    """--compat NAME (repeatable, or a comma list): the dialect names, checked; None when
    not given (the config's daemon.compat then holds)."""
    from dbgauge import app
    from dbgauge.toolkit.config import check_compat

    names = tuple(dict.fromkeys(n.strip() for v in value for n in v.split(",") if n.strip()))
    if not value:
        return None
    try:
        check_compat(names, app.dialect_kinds())
    except ValueError as exc:
        raise click.BadParameter(str(exc).removeprefix("compat: ")) from None
    return names


COMPAT_OPTION = click.option(
    "--compat", multiple=True, callback=_compat, metavar="EXPORTER",
    help="Also speak this peer exporter's metric names (mysqld_exporter, postgres_exporter, "
         "pgbouncer_exporter) for every target of its kind; repeatable or a comma list. "
         "Overrides daemon.compat; a target's own compat: list still wins.")


COMPAT_ONLY_OPTION = click.option(
    "--compat-only", is_flag=True,
    help="Serve only the peers' names for what a dialect translates (not dbgauge's), and "
         "run only the peer's default collectors on a target without a collectors: list: "
         "the peer's output, for a switch that changes nothing else. dbgauge's own up and "
         "collector metrics stay. Sets daemon.compat_only.")


def _progress_interval(_ctx: click.Context, _param: click.Parameter, value: str) -> Every:
    from dbgauge.toolkit.render.progress import parse_progress

    try:
        return parse_progress(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


PROGRESS_OPTION = click.option(
    "--progress", default="time,30", show_default=True, callback=_progress_interval,
    metavar="TYPE,N", help="Not on a terminal: a status line (N of M, percent, time left) "
                           "on stderr every N seconds (time,N), every N percent of the work "
                           "(percentage,N) or every N tables or files (iterations,N), as "
                           "pt-table-checksum's --progress. On a terminal a progress bar "
                           "with the ETA is drawn instead.")
QUIET_OPTION = click.option("--quiet", "-q", is_flag=True,
                            help="No progress bar and no status lines.")

# Exit status of an expected failure, by exception type (the first match wins). Usage
# errors are 2 like click's own; `dbgauge check` turns any failure into UNKNOWN (3).
ERROR_EXIT: tuple[tuple[type[DbgaugeError], int], ...] = (
    (MissingBinaryError, 2),
    (SandboxError, 1),
    (ConfigError, 2),
    (ConnectError, 2),
    (QueryError, 2),
    (CheckFailed, 2),
    (WriteRefused, 2),
    (DbgaugeError, 1),
)

# Exit status of a finished run, by command family and the result's status.
RESULT_EXIT: dict[str, dict[Status, int]] = {
    # monitoring plugins: the state is the exit code
    "check": {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 2, Status.UNKNOWN: 3},
    # 0 no drift, 1 drift, 2 some table could not be checked
    "checksum": {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 1, Status.UNKNOWN: 2},
    # 0 no errors, 1 errors; warnings fail only with --strict
    "validate": {Status.OK: 0, Status.WARNING: 0, Status.CRITICAL: 1, Status.UNKNOWN: 1},
    "validate --strict": {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 1,
                          Status.UNKNOWN: 1},
    # 0 every file passed, 1 a failure
    "pgtap": {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 1, Status.UNKNOWN: 1},
    # `collect`: 1 when the target is down; `sandbox status`: 1 when an instance is
    "collect": {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 1, Status.UNKNOWN: 1},
    "sandbox status": {Status.OK: 0, Status.WARNING: 1, Status.CRITICAL: 1,
                       Status.UNKNOWN: 1},
}


def error_exit(exc: DbgaugeError) -> int:
    """The exit status of an expected failure."""
    return next(code for kind, code in ERROR_EXIT if isinstance(exc, kind))


def die(exc: DbgaugeError) -> NoReturn:
    """One line on stderr, the table's exit status."""
    click.echo(f"dbgauge: error: {redact(str(exc))}", err=True)
    sys.exit(error_exit(exc))


def finish(family: str, status: Status) -> NoReturn:
    """Exit with the status a `family` command gives a result of `status`."""
    sys.exit(RESULT_EXIT[family][status])


def exit_now(code: int) -> NoReturn:
    """Exit without waiting for worker threads: one stuck in a driver call (a frozen
    server) would otherwise hold the interpreter's exit-time join of its pool for as long
    as the server's timeouts allow. Only the streams are flushed; a flush that would
    re-enter a write the main thread was interrupted in is skipped."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


@contextlib.contextmanager
def interrupt_exits(on_interrupt: Callable[[], int]) -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) ends the process at once with the exit status
    `on_interrupt()` returns, wherever the main thread is: parsing a config, waiting for
    a fan-out whose server hangs, sleeping. Nothing unwinds: a KeyboardInterrupt would
    wait for the fan-out's threads and could stop a `with lock:` half way."""
    def handler(_signum: int, _frame: object) -> None:
        exit_now(on_interrupt())

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def seconds(value: str) -> float:
    """A duration option ('0.5', '500ms', '2s', '1m30s', '2d') in seconds."""
    try:
        return float(parse_duration(value))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def positive_duration(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    """click callback: a duration above 0."""
    result = seconds(value)
    if result <= 0:
        raise click.BadParameter("must be more than 0")
    return result


def read_password(path: Path | None, option: str = "--password-file") -> str | None:
    """The secret in `path` (registered for redaction), or None without a path."""
    if path is None:
        return None
    try:
        secret = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read {option} {path}: {exc.strerror}") from None
    register_secret(secret)
    return secret


def optional_positive_duration(ctx: click.Context, param: click.Parameter,
                               value: str | None) -> float | None:
    """click callback: a duration above 0, or None when the option is not given."""
    return None if value is None else positive_duration(ctx, param, value)
