"""`dbgauge pgtap`: a pg_prove-class runner for pgTAP suites, and schema-snapshot tests."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dbgauge.cli.base import (
    PROGRESS_OPTION,
    QUIET_OPTION,
    RESULT_EXIT,
    die,
    finish,
    interrupt_exits,
    optional_positive_duration,
)
from dbgauge.cli.pg_prove import PG_PROVE_EPILOG, pg_prove_options
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.result import Status

if TYPE_CHECKING:
    from dbgauge.toolkit.pgtap.runner import FileResult
    from dbgauge.toolkit.render.pgtap import Display
    from dbgauge.toolkit.render.progress import Every, Progress


def _pgtap_connection(f: click.decorators.FC) -> click.decorators.FC:
    """pg_prove's connection flags: --dsn (any libpq form) and -h -p -U -d over it;
    without any, libpq's PG* environment (PGHOST, PGPORT, PGUSER, PGDATABASE,
    PGPASSWORD, PGSERVICE...) as for psql."""
    options = (
        click.option("--dsn", envvar="DBGAUGE_PGTAP_DSN", metavar="DSN",
                     help="postgresql://user@host:port/db, host=... dbname=..., or "
                          "service=NAME (env DBGAUGE_PGTAP_DSN; default: the PG* "
                          "environment). Keep the password out of the command line: "
                          "PGPASSWORD, PGPASSFILE or ~/.pgpass."),
        click.option("-h", "--host", metavar="HOST", help="Server host or socket directory."),
        click.option("-p", "--port", metavar="PORT", help="Server port."),
        click.option("-U", "--username", metavar="USER", help="Database user."),
        click.option("-d", "--dbname", metavar="DBNAME", help="Database."),
    )
    for option in reversed(options):
        f = option(f)
    return f


def _dsn(dsn: str | None, host: str | None, port: str | None, username: str | None,
         dbname: str | None) -> str:
    from dbgauge.toolkit.dsn import libpq_dsn

    return libpq_dsn(dsn, host=host, port=port, user=username, dbname=dbname)


# pg_prove's -h is the host: help is -H/--help, as in pg_prove
_PG_PROVE_CONTEXT = {"help_option_names": ["-H", "--help"]}


@click.group("pgtap", short_help="Run pgTAP suites (JUnit, parallel) and generate schema tests.")
def pgtap_group() -> None:
    """pgTAP in CI: a pg_prove-class runner and schema-snapshot test generation.

    \b
    Examples:
      dbgauge pgtap run sql/tests --dsn postgresql://ci@db:5432/app -j 4 --junit junit.xml
      dbgauge pgtap run --runtests --schema test --dsn postgresql://ci@db/app
      dbgauge pgtap generate --dsn postgresql://ci@db/app --schema public > schema_test.sql
    """


@pgtap_group.command("run", short_help="Run pgTAP test files (or runtests()) through psql.",
                     context_settings=_PG_PROVE_CONTEXT, epilog=PG_PROVE_EPILOG)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@_pgtap_connection
@click.option("-j", "--jobs", "parallel", default=1, show_default=True,
              type=click.IntRange(1, 256), help="Files run at once, each in its own session "
              "(output stays in file order).")
@click.option("--ext", multiple=True, metavar="EXT",
              help="Extension searched for in directories (repeatable; default .sql and .pg).")
@click.option("-r", "--recurse", is_flag=True,
              help="Search directories' subdirectories too (without it, the files directly "
                   "in a directory, as pg_prove).")
@click.option("-R", "--runtests", is_flag=True,
              help="xUnit mode: call runtests(); with PATHs, each file is sourced first in "
                   "the same session (to create the test functions).")
@click.option("-s", "--schema", metavar="SCHEMA",
              help="Schema of the xUnit test functions (implies --runtests).")
@click.option("-x", "--match", metavar="REGEX",
              help="Regex for xUnit test function names (implies --runtests; default ^test).")
@click.option("-S", "--set", "variables", multiple=True, metavar="VAR=VALUE",
              help="psql variable for every file (repeatable).")
@click.option("-P", "--pset", "psets", multiple=True, metavar="OPT=VALUE",
              help="psql printing option (repeatable).")
@click.option("--junit", "junit_path", metavar="FILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Also write JUnit XML: a testsuite per file, a testcase per test.")
@click.option("--tap", "raw_tap", is_flag=True,
              help="Print each file's raw TAP in file order (psql's stderr and the "
                   "summary go to stderr).")
@click.option("--install-pgtap", is_flag=True,
              help="If the database lacks the pgtap extension, create it for the run and "
                   "drop it afterwards.")
@click.option("--timeout", callback=optional_positive_duration,
              metavar="DURATION",
              help="Kill a file's psql after this long (30, 1m30s; the file fails).")
@click.option("-b", "--psql-bin", "--psql", "psql_bin", metavar="PATH",
              help="psql binary (default: psql on PATH; on Debian/Ubuntu the newest "
                   "/usr/lib/postgresql/*/bin/psql, which is what pg_wrapper would run).")
@click.option("-v", "--verbose", is_flag=True, help="Print every TAP line of each file.")
@click.option("-o", "--comments", is_flag=True, help="Print each file's comments and "
              "diagnostics.")
@click.option("-f", "--failures", is_flag=True, expose_value=False,
              help="Show failed tests (always shown; accepted as pg_prove's).")
@click.option("-Q", "--QUIET", "summary_only", is_flag=True,
              help="Only the summary (failed files are in it).")
@click.option("-t", "--timer", is_flag=True, help="The time each file ended, first on its "
              "line.")
@click.option("--shuffle", "order", flag_value="shuffle", help="Run the files in random order.")
@click.option("--reverse", "order", flag_value="reverse", help="Run the files in reverse order.")
@click.option("--trap", is_flag=True, help="On Ctrl-C, print the summary of the files done "
              "so far (exit 1).")
@click.option("-D", "--dry", is_flag=True, help="Print the files that would run, and exit.")
@PROGRESS_OPTION
@QUIET_OPTION
@pg_prove_options
def pgtap_run(paths: tuple[str, ...], dsn: str | None, host: str | None, port: str | None,
              username: str | None, dbname: str | None, parallel: int, ext: tuple[str, ...],
              recurse: bool, runtests: bool, schema: str | None, match: str | None,
              variables: tuple[str, ...], psets: tuple[str, ...], junit_path: Path | None,
              raw_tap: bool, install_pgtap: bool, timeout: float | None,
              psql_bin: str | None, verbose: bool, comments: bool, summary_only: bool,
              timer: bool, order: str | None, trap: bool, dry: bool,
              progress: Every, quiet: bool) -> None:
    """Run pgTAP tests, one psql session per file (pg_prove's psql flags, so \\i, \\ir,
    \\set, \\pset, ON_ERROR_STOP and ON_ERROR_ROLLBACK behave as under pg_prove).

    Directories are searched for .sql and .pg files (-r: their subdirectories too). A file
    fails on a failed test, a plan mismatch, a TAP parse error, a Bail out!, or an SQL
    error. Output is in file order, also under -j. Exit status: 0 all passed, 1 any
    failure, 2 could not run.

    \b
    Connection: --dsn (a postgresql:// URI, libpq key=value pairs or service=NAME) and
    pg_prove's -h -p -U -d over it; what neither gives comes from PGHOST, PGPORT,
    PGUSER, PGDATABASE, PGPASSWORD, PGSERVICE... as for psql. Help is -H/--help.

    \b
    Examples:
      dbgauge pgtap run sql/tests --dsn postgresql://ci@127.0.0.1:5432/app -j 4 \\
          --set schema=app --junit build/pgtap.xml
      PGHOST=db PGUSER=ci PGDATABASE=app dbgauge pgtap run t/
      dbgauge pgtap run -h db -p 5432 -U ci -d app t/
    """
    from dbgauge.toolkit.pgtap import files, runner
    from dbgauge.toolkit.render import junit
    from dbgauge.toolkit.render import pgtap as report
    from dbgauge.toolkit.render.progress import Progress

    bar = Progress("file", interval=progress, quiet=quiet, sequential=False)
    display = report.Display(verbose, comments, timer, summary_only)
    try:
        spec = runner.Runtests(schema, match) if (runtests or schema or match) else None
        dsn = _dsn(dsn, host, port, username, dbname)
        plan = files.plan_run(dsn, paths, extensions=ext, runtests=spec, variables=variables,
                              psets=psets, timeout=timeout, psql=psql_bin, recurse=recurse,
                              order=order or "file")
        if dry:
            click.echo("\n".join(j.name for j in plan.jobs))
            return
        if junit_path is not None:
            junit.check_directory(junit_path)
        shown = _Shown(bar, [j.name for j in plan.jobs], raw_tap, display)
        with interrupt_exits(shown.interrupted) if trap else contextlib.nullcontext():
            run = runner.execute(dsn, plan.options, plan.jobs, parallel,
                                 install_pgtap=install_pgtap, on_done=shown.done,
                                 on_note=bar.note)
        if junit_path is not None:
            junit.write(run.results, junit_path)
    except DbgaugeError as exc:
        bar.clear()
        die(exc)
    bar.clear()
    click.echo(report.summary(run.results, run.wall, parallel, run.facts), err=raw_tap)
    finish("pgtap", Status.OK if run.passed else Status.CRITICAL)


class _Shown:
    """What a run prints as each file finishes, under the progress bar: its line (as
    `display` says), or with --tap its raw TAP, in file order whatever finished first."""

    def __init__(self, bar: Progress, names: list[str], raw_tap: bool,
                 display: Display) -> None:
        from dbgauge.toolkit.render.pgtap import name_width

        self.bar = bar
        self.raw_tap = raw_tap
        self.display = display
        self.width = name_width(names)
        bar.plan([(name, 1) for name in names])
        self._done: dict[int, FileResult] = {}
        self._next = 0
        self.finished: list[FileResult] = []  # in file order: what --trap summarises
        self.started = time.monotonic()

    def done(self, index: int, result: FileResult) -> None:
        self.bar.clear()
        try:
            self._done[index] = result
            while self._next in self._done:
                r = self._done.pop(self._next)
                self._print(r)
                self.finished.append(r)
                self._next += 1
        finally:
            self.bar.progress(result.name, 1, 1)

    def _print(self, result: FileResult) -> None:
        from dbgauge.toolkit.render.pgtap import file_block

        if not self.raw_tap:
            block = file_block(result, self.width, self.display)
            if block is not None:
                click.echo(block)
            return
        click.echo(f"# dbgauge pgtap: {result.name}")
        for line in result.lines:
            click.echo(line)
        if result.stderr:
            click.echo(result.stderr, err=True, nl=not result.stderr.endswith("\n"))

    def interrupted(self) -> int:
        """--trap: Ctrl-C prints the summary of the files finished so far."""
        from dbgauge.toolkit.render.pgtap import summary

        self.bar.clear()
        click.echo(f"\nInterrupted: {len(self.finished)} file(s) finished", err=self.raw_tap)
        click.echo(summary(self.finished, time.monotonic() - self.started, 0, None),
                   err=self.raw_tap)
        return RESULT_EXIT["pgtap"][Status.CRITICAL]


@pgtap_group.command("generate", short_help="Write pgTAP tests that pin down a live schema.",
                     context_settings=_PG_PROVE_CONTEXT)
@_pgtap_connection
@click.option("--schema", "schemas", multiple=True, metavar="SCHEMA",
              help="Schema to snapshot (repeatable; default: every non-system schema).")
@click.option("-o", "--output", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to FILE instead of stdout.")
def pgtap_generate(dsn: str | None, host: str | None, port: str | None, username: str | None,
                   dbname: str | None, schemas: tuple[str, ...], output: Path | None) -> None:
    """Snapshot a live schema into a pgTAP file: tables, columns and their types,
    nullability and defaults, primary and foreign keys, indexes, functions, triggers and
    views. It passes on the schema it came from and fails, naming the difference, when
    the schema drifts. Commit it once; CI then catches unreviewed schema changes.

    \b
    Example:
      dbgauge pgtap generate --dsn postgresql://ci@127.0.0.1/app --schema public \\
          > test/schema_test.sql
      dbgauge pgtap run test/schema_test.sql --dsn postgresql://ci@127.0.0.1/app
    """
    from dbgauge.toolkit.pgtap.generate import generate_from_dsn

    try:
        text = generate_from_dsn(_dsn(dsn, host, port, username, dbname), list(schemas))
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"cannot write {output}: {exc.strerror}") from None
    except DbgaugeError as exc:
        die(exc)
    if output is None:
        click.echo(text, nl=False)
