"""`dbgauge checksum`: find rows that differ between a source and its replicas."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from click.core import ParameterSource

from dbgauge.cli.base import (
    CONFIG_OPTION,
    PROGRESS_OPTION,
    QUIET_OPTION,
    die,
    finish,
    optional_positive_duration,
    positive_duration,
    read_password,
    seconds,
)
from dbgauge.toolkit.errors import DbgaugeError

if TYPE_CHECKING:
    from dbgauge.toolkit.render.progress import Every, Progress
    from dbgauge.toolkit.result import CheckResult
    from dbgauge.toolkit.targets import Target


@click.command(short_help="Find rows that differ between a source and its replicas.")
@click.option("--source", "source_arg", required=True, metavar="SRC",
              help="DSN (mysql://user@host:port/, postgresql://user@host:port/db) or a "
                   "target name from --config.")
@click.option("--replica", "replica_args", multiple=True, metavar="DST",
              help="DSN or target name of a replica or copy (repeatable). Without it, "
                   "MySQL-family replicas are found by --recursion-method.")
@CONFIG_OPTION
@click.option("--tables", multiple=True, metavar="DB.TBL,...",
              help="Tables to compare: schema.table, a bare table name (any schema) or a "
                   "shell pattern (app.*, app.log_*); comma-separated, repeatable. Each must "
                   "match a table. Default: every table but system schemas and dbgauge's own.")
@click.option("--exclude", "--ignore-tables", multiple=True, metavar="PATTERN,...",
              help="Tables to skip: names or shell patterns (app.log_*, archive.*, bare "
                   "log_*). --ignore-tables is pt-table-checksum's name.")
@click.option("--databases", multiple=True, metavar="DB,...",
              help="Only these schemas (names or shell patterns; each must match one).")
@click.option("--ignore-databases", multiple=True, metavar="DB,...",
              help="Skip these schemas (names or shell patterns).")
@click.option("--databases-regex", metavar="REGEX",
              help="Only schemas whose name matches this regex (searched, as pt does).")
@click.option("--ignore-databases-regex", metavar="REGEX",
              help="Skip schemas whose name matches this regex.")
@click.option("--tables-regex", metavar="REGEX",
              help="Only tables whose name (without schema) matches this regex.")
@click.option("--ignore-tables-regex", metavar="REGEX",
              help="Skip tables whose name (without schema) matches this regex.")
@click.option("--different-databases", is_flag=True,
              help="PostgreSQL sides connected to databases of different names are meant "
                   "to be compared (a copy under another name); without it such a run "
                   "is refused.")
@click.option("--method", type=click.Choice(["replicated", "direct"]),
              help="replicated (pt-table-checksum's, MySQL family; default there) or direct "
                   "(any pair, across engines too).")
@click.option("--chunk-time", default="0.5", show_default=True, callback=positive_duration,
              metavar="SECONDS", help="Target time of one chunk.")
@click.option("--chunk-size", type=click.IntRange(1), metavar="ROWS",
              help="Fixed rows per chunk instead of sizing chunks to --chunk-time "
                   "(pt-table-checksum's --chunk-size; not with --chunk-time). Every table is "
                   "walked in such chunks: no whole-table pre-check unless "
                   "--whole-table-time is given too.")
@click.option("--whole-table-time", default="2s", show_default=True,
              callback=lambda _c, _p, v: seconds(v), metavar="SECONDS",
              help="MariaDB pairs: compare a table expected to take at most this long "
                   "whole with CHECKSUM TABLE first (read-only, on every side at once), and "
                   "walk its chunks only if the values differ (0: always walk chunks; the "
                   "default with --chunk-size).")
@click.option("--max-lag", default="1s", show_default=True, callback=positive_duration,
              metavar="SECONDS", help="Pause while a replica lags more than this.")
@click.option("--max-wait", default="10m", show_default=True, callback=positive_duration,
              metavar="DURATION",
              help="Longest wait for one side before the run gives up (exit 2, naming it; "
                   "progress is saved for --resume): a replica lagging more than --max-lag, "
                   "the source busier than --max-load, a server that does not answer a "
                   "statement (at most 2m then). Progress lines keep coming while it waits. "
                   "pt-table-checksum waits forever.")
@click.option("--max-threads-running", default=25, show_default=True,
              type=click.IntRange(1), metavar="N", help="Pause while the source runs more "
              "statements than this (Threads_running / active backends).")
@click.option("--max-load", multiple=True, metavar="VAR=N,...",
              help="Pause while a SHOW GLOBAL STATUS variable of the source exceeds N "
                   "(MySQL family; VAR alone: its value at the start + 20%). "
                   "Threads_running=N is --max-threads-running N.")
@click.option("--recursion-method", multiple=True, metavar="METHOD",
              help="Find replicas when no --replica is given (MySQL family): processlist, "
                   "hosts, dsn=D=db,t=tbl (pt's DSN table), none; comma-separated, tried in "
                   "order (default processlist,hosts).")
@click.option("--replicate", metavar="DB.TBL",
              help="Replicated method: write chunk results to this table in "
                   "pt-table-checksum's layout (master_crc, master_cnt, ...), created if "
                   "missing. Default: dbgauge.checksums.")
@click.option("--allow-read-only", is_flag=True,
              help="Replicated method: write the replicate table even when the source is "
                   "read_only (an account with SUPER can). Default: refuse, since a source "
                   "that is read-only is a replica and the writes would be errant there.")
@click.option("--replicate-check-only", is_flag=True,
              help="Only report the differing chunks the replicas' replicate table already "
                   "records (exit 1 if any); do not checksum.")
@click.option("--retries", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Most re-reads of a differing row whose values keep moving before it is "
                   "reported (a row that holds still is reported after one re-read).")
@click.option("--retry-delay", default="0.25", show_default=True, callback=positive_duration,
              metavar="SECONDS", help="Pause before each re-check.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--print-repair", is_flag=True,
              help="Print the statements that would make each replica match (never run).")
@click.option("--show-values", is_flag=True,
              help="Also print the source's and the replica's value of each differing "
                   "column of a changed row (off by default: values may be sensitive).")
@click.option("--resume", is_flag=True, help="Continue an interrupted run with the same "
              "servers (by address) and arguments; another run's state is refused.")
@click.option("--state-file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where progress is kept for --resume (default: ~/.local/state/dbgauge/).")
@click.option("--run-time",
              callback=optional_positive_duration,
              metavar="DURATION",
              help="Stop after this long (1h, 2h30m), resumably (--resume continues).")
@click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="Password for DSNs that carry none.")
@PROGRESS_OPTION
@QUIET_OPTION
def checksum(source_arg: str, replica_args: tuple[str, ...], config_path: str | None,
             tables: tuple[str, ...], exclude: tuple[str, ...], databases: tuple[str, ...],
             ignore_databases: tuple[str, ...], databases_regex: str | None,
             ignore_databases_regex: str | None, tables_regex: str | None,
             ignore_tables_regex: str | None, method: str | None,
             chunk_time: float, chunk_size: int | None, whole_table_time: float,
             max_lag: float, max_wait: float, max_threads_running: int, max_load: tuple[str, ...],
             recursion_method: tuple[str, ...], replicate: str | None,
             allow_read_only: bool, replicate_check_only: bool, different_databases: bool,
             retries: int, retry_delay: float, fmt: str, print_repair: bool,
             show_values: bool, resume: bool, state_file: Path | None, run_time: float | None,
             password_file: Path | None, progress: Every, quiet: bool) -> None:
    """Compare tables on a source and its replicas chunk by chunk, and name the rows that
    differ (missing, extra or changed) by key. Exit status: 0 no drift, 1 drift found,
    2 could not check (the reason is printed): also when no table was compared, and for a
    read-only source, where the replicated method writes nothing unless --allow-read-only.

    \b
    Examples:
      dbgauge checksum --config dbgauge.yaml --source orders-primary --replica orders-replica
      dbgauge checksum --source mysql://dbgauge@db1:3306/ --replica mysql://dbgauge@db2:3306/ \\
          --password-file pw --method direct --tables shop.orders --print-repair
      dbgauge checksum --source postgresql://dbgauge@pg1/app \\
          --replica postgresql://dbgauge@pg2/app --format json
      dbgauge checksum --source mysql://dbgauge@db1/ --password-file pw \\
          --recursion-method processlist --replicate percona.checksums --tables 'shop.*'
      dbgauge checksum --source mysql://dbgauge@db1/ --password-file pw \\
          --replicate percona.checksums --replicate-check-only
    """
    from dbgauge.checks.drift import ChecksumOptions, run_checksum
    from dbgauge.checks.drift.select import split_list
    from dbgauge.toolkit.render.progress import Progress
    from dbgauge.toolkit.targets import split_names

    reporter = Progress("table", interval=progress, quiet=quiet)
    signal.signal(signal.SIGTERM, _stop)
    try:
        pt = _pt_options(chunk_size, max_threads_running, max_load, recursion_method,
                         whole_table_time)
        source, replicas = _targets(source_arg, replica_args, config_path, password_file)
        options = ChecksumOptions(
            tables=tuple(split_names(tables)), exclude=tuple(split_names(exclude)),
            method=method, chunk_time=chunk_time,
            max_lag=max_lag, max_pause=max_wait, wait_timeout=max_wait, retries=retries,
            max_threads_running=max_threads_running, retry_delay=retry_delay,
            print_repair=print_repair, resume=resume, state_file=state_file,
            run_time=run_time, show_values=show_values, databases=split_list(databases),
            ignore_databases=split_list(ignore_databases),
            databases_regex=databases_regex, ignore_databases_regex=ignore_databases_regex,
            tables_regex=tables_regex, ignore_tables_regex=ignore_tables_regex,
            chunk_size=chunk_size, replicate=replicate, allow_read_only=allow_read_only,
            replicate_check_only=replicate_check_only, different_databases=different_databases,
            **pt)
        with reporter.ticking():  # a wait prints its progress lines too
            result = run_checksum(source, replicas, options, reporter)
    except (DbgaugeError, KeyboardInterrupt) as exc:
        _fail(exc, fmt, reporter)
    reporter.clear()
    _echo(result, fmt)
    finish("checksum", result.status)


def _fail(exc: DbgaugeError | KeyboardInterrupt, fmt: str, reporter: Progress) -> NoReturn:
    """An expected failure: its line on stderr and, with --format json, a JSON document on
    stdout too (`{"status": "error", "error": ...}`), so a machine reading it never gets
    an empty output. Ctrl-C before the tables are checked (connecting, planning) is one."""
    from dbgauge.checks.drift.model import Interrupted

    reporter.clear()
    if isinstance(exc, KeyboardInterrupt):
        exc = Interrupted("interrupted before any table was checked")
    if fmt == "json":
        from dbgauge.toolkit.render.checksum import render_checksum_error_json

        click.echo(render_checksum_error_json(str(exc)))
    die(exc)


def _stop(_signum: int, _frame: object) -> None:
    """SIGTERM stops a run as Ctrl-C does: resumably."""
    raise KeyboardInterrupt


def _targets(source_arg: str, replica_args: tuple[str, ...], config_path: str | None,
             password_file: Path | None) -> tuple[Target, list[Target]]:
    """--source and --replica as targets: DSNs, or names from the config."""
    from dbgauge.toolkit.dsn import is_dsn
    from dbgauge.toolkit.targets import resolve

    configured = None
    if config_path or not all(is_dsn(a) for a in (source_arg, *replica_args)):
        from dbgauge import app

        configured = {t.name: t for t in app.load_config(config_path).all_targets()}
    read_password(password_file)
    source = resolve(source_arg, configured, password_file=password_file)
    replicas = [resolve(a, configured, password_file=password_file) for a in replica_args]
    return source, replicas


def _echo(result: CheckResult, fmt: str) -> None:
    """The report on stdout: text, or JSON (--format json)."""
    from dbgauge.toolkit.render.checksum import render_checksum, render_checksum_json

    click.echo(render_checksum_json(result) if fmt == "json" else render_checksum(result))


def _pt_options(chunk_size: int | None, max_threads_running: int, max_load: tuple[str, ...],
                recursion_method: tuple[str, ...], whole_table_time: float) -> dict[str, Any]:
    """pt-table-checksum's options that need checking against dbgauge's own. A user who
    sizes chunks (--chunk-size) expects chunks: it turns the whole-table pre-check off
    unless --whole-table-time is given too."""
    from dbgauge.checks.drift.discover import parse_recursion_method
    from dbgauge.checks.drift.load import THREADS_RUNNING, parse_max_load
    from dbgauge.toolkit.errors import ConfigError

    ctx = click.get_current_context()
    given = {name for name in ("chunk_time", "max_threads_running", "whole_table_time")
             if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}
    if chunk_size is not None and "chunk_time" in given:
        raise ConfigError("give --chunk-size ROWS (fixed rows per chunk) or --chunk-time "
                          "SECONDS (chunks sized to a time), not both")
    limits = parse_max_load(max_load)
    if "max_threads_running" in given and any(
            name.lower() == THREADS_RUNNING.lower() for name, _ in limits):
        raise ConfigError(f"--max-load {THREADS_RUNNING}=N and --max-threads-running N set the "
                          "same limit: give one of them")
    if chunk_size is not None and "whole_table_time" not in given:
        whole_table_time = 0.0  # chunks of --chunk-size rows, as pt walks them
    return {"max_load": limits, "recursion_method": parse_recursion_method(recursion_method),
            "whole_table_time": whole_table_time}
