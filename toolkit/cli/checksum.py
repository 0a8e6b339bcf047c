"""`dbgauge checksum`: find rows that differ between a source and its replicas."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.base import (
    CONFIG_OPTION,
    die,
    finish,
    positive_duration,
    read_password,
    seconds,
)
from toolkit.errors import DbgaugeError


@click.command(short_help="Find rows that differ between a source and its replicas.")
@click.option("--source", "source_arg", required=True, metavar="SRC",
              help="DSN (mysql://user@host:port/, postgresql://user@host:port/db) or a "
                   "target name from --config.")
@click.option("--replica", "replica_args", required=True, multiple=True, metavar="DST",
              help="DSN or target name of a replica or copy (repeatable).")
@CONFIG_OPTION
@click.option("--tables", multiple=True, metavar="DB.TBL,...",
              help="Tables to compare (schema.table; comma-separated, repeatable). Default: "
                   "every table but system schemas and dbgauge's own.")
@click.option("--exclude", multiple=True, metavar="PATTERN,...",
              help="Tables to skip, as shell patterns (app.log_*, archive.*).")
@click.option("--method", type=click.Choice(["replicated", "direct"]),
              help="replicated (pt-table-checksum's, MySQL family; default there) or direct "
                   "(any pair, across engines too).")
@click.option("--chunk-time", default="0.5", show_default=True, callback=positive_duration,
              metavar="SECONDS", help="Target time of one chunk.")
@click.option("--whole-table-time", default="2s", show_default=True,
              callback=lambda _c, _p, v: seconds(v), metavar="SECONDS",
              help="MariaDB pairs: compare a table expected to take at most this long "
                   "whole with CHECKSUM TABLE first (read-only, on every side at once), and "
                   "walk its chunks only if the values differ (0: always walk chunks).")
@click.option("--max-lag", default="1s", show_default=True, callback=positive_duration,
              metavar="SECONDS", help="Pause while a replica lags more than this.")
@click.option("--max-threads-running", default=25, show_default=True,
              type=click.IntRange(1), metavar="N", help="Pause while the source runs more "
              "statements than this (Threads_running / active backends).")
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
              callback=lambda c, p, v: None if v is None else positive_duration(c, p, v),
              metavar="SECONDS", help="Stop after this long, resumably (--resume continues).")
@click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="Password for DSNs that carry none.")
def checksum(source_arg: str, replica_args: tuple[str, ...], config_path: str | None,
             tables: tuple[str, ...], exclude: tuple[str, ...], method: str | None,
             chunk_time: float, whole_table_time: float, max_lag: float,
             max_threads_running: int, retries: int,
             retry_delay: float, fmt: str, print_repair: bool, show_values: bool,
             resume: bool,
             state_file: Path | None, run_time: float | None,
             password_file: Path | None) -> None:
    """Compare tables on a source and its replicas chunk by chunk, and name the rows that
    differ (missing, extra or changed) by key. Exit status: 0 no drift, 1 drift found,
    2 could not check (the reason is printed).

    \b
    Examples:
      dbgauge checksum --config dbgauge.yaml --source orders-primary --replica orders-replica
      dbgauge checksum --source mysql://dbgauge@db1:3306/ --replica mysql://dbgauge@db2:3306/ \\
          --password-file pw --method direct --tables shop.orders --print-repair
      dbgauge checksum --source postgresql://dbgauge@pg1/app \\
          --replica postgresql://dbgauge@pg2/app --format json
    """
    import signal

    from checks.drift import ChecksumOptions, run_checksum
    from toolkit.render.checksum import render_checksum, render_checksum_json
    from toolkit.render.progress import ProgressBar
    from toolkit.targets import resolve, split_names

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    reporter = ProgressBar()
    signal.signal(signal.SIGTERM, stop)
    try:
        configured = None
        if config_path or any("://" not in a for a in (source_arg, *replica_args)):
            from toolkit import app

            configured = {t.name: t for t in app.load_config(config_path).all_targets()}
        read_password(password_file)
        source = resolve(source_arg, configured, password_file=password_file)
        replicas = [resolve(a, configured, password_file=password_file) for a in replica_args]
        options = ChecksumOptions(
            tables=tuple(split_names(tables)), exclude=tuple(split_names(exclude)),
            method=method, chunk_time=chunk_time, whole_table_time=whole_table_time,
            max_lag=max_lag, max_threads_running=max_threads_running,
            retries=retries, retry_delay=retry_delay, print_repair=print_repair, resume=resume,
            state_file=state_file, run_time=run_time, show_values=show_values)
        result = run_checksum(source, replicas, options, reporter)
    except DbgaugeError as exc:
        reporter.clear()
        die(exc)
    reporter.clear()
    if fmt == "json":
        click.echo(render_checksum_json(result))
    else:
        click.echo(render_checksum(result))
    finish("checksum", result.status)
