"""`dbgauge heartbeat`: pt-heartbeat's three jobs as their own processes, without the
daemon: `update` writes the heartbeat row, `monitor` prints each replica's lag as it
goes, `check` is one reading with monitoring-plugin output (`check lag` on the table).

The table layout and timestamps are pt-heartbeat's (read as UTC: run pt-heartbeat with
--utc), so either side may be pt-heartbeat itself.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dbgauge.cli.base import CONFIG_OPTION, die, optional_positive_duration, positive_duration
from dbgauge.toolkit import DEFAULT_HEARTBEAT_TABLE
from dbgauge.toolkit.errors import DbgaugeError

if TYPE_CHECKING:
    from dbgauge.toolkit.targets import Heartbeat, Target


_SCHEMA, _, _TABLE = DEFAULT_HEARTBEAT_TABLE.partition(".")


def _connection_options(f: click.decorators.FC) -> click.decorators.FC:
    options = (
        click.option("--database", "-D", default=_SCHEMA, show_default=True,
                     metavar="DB", help="Schema of the heartbeat table (pt-heartbeat's -D)."),
        click.option("--table", default=_TABLE, show_default=True, metavar="TABLE",
                     help="Heartbeat table (TABLE in --database, or SCHEMA.TABLE)."),
        click.option("--password-env", metavar="VAR",
                     help="Environment variable holding the password of DSNs that carry none."),
        click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
                     metavar="FILE", help="File holding the password of DSNs that carry none."),
        CONFIG_OPTION,
    )
    for option in options:
        f = option(f)
    return f


def _targets(args: tuple[str, ...], config_path: str | None, password_file: Path | None,
             password_env: str | None, settings: Heartbeat) -> list[Target]:
    """The command line's servers ([NAME=]DSN or configured names), MySQL family only,
    each with these heartbeat settings (a pt DSN's D= and t= name the table when -D and
    --table are left at their defaults, as pt-heartbeat reads them)."""
    from dataclasses import replace

    from dbgauge.toolkit.dsn import is_dsn, pt_table
    from dbgauge.toolkit.heartbeat import split_table, table_name, with_heartbeat
    from dbgauge.toolkit.targets import resolve, split_named

    pieces = []
    for arg in args:
        name, dsn = split_named(arg)
        db, tbl, rest = pt_table(dsn)
        if (db or tbl) and settings.table == DEFAULT_HEARTBEAT_TABLE and tbl:
            settings = replace(settings, table=table_name(db or _SCHEMA, tbl))
        pieces.append(f"{name}={rest}" if name else rest)
    args = tuple(pieces)
    split_table(settings.table)
    configured = None
    if config_path is not None and any(not is_dsn(a) for a in args):
        from dbgauge import app

        configured = {t.name: t for t in app.load_config(config_path).all_targets()}
    return [with_heartbeat(resolve(arg, configured, password_file=password_file,
                                   password_env=password_env), settings) for arg in args]


def _settings(mode: str, database: str, table: str, interval: float = 1.0,
              source_server_id: int | None = None, allow_read_only: bool = False) -> Heartbeat:
    from dbgauge.toolkit.heartbeat import table_name
    from dbgauge.toolkit.targets import Heartbeat

    return Heartbeat(mode, interval, table_name(database, table), source_server_id,
                     allow_read_only)


@click.group("heartbeat", short_help="pt-heartbeat without the daemon: update, monitor, check.")
def heartbeat_group() -> None:
    """Replication lag from a heartbeat row, as pt-heartbeat measures it: `update` keeps
    the source's row fresh, `monitor` prints each replica's lag, `check` is one reading
    for a monitoring system. Tables written by pt-heartbeat --utc are read as well as
    dbgauge's own (the same layout); the daemon does the same with `heartbeat:` settings.

    \b
    Examples:
      dbgauge heartbeat update mysql://dbgauge@db1:3306/ --create-table --password-file pw
      dbgauge heartbeat monitor mysql://dbgauge@db2:3306/ mysql://dbgauge@db3:3306/
      dbgauge heartbeat check --node mysql://dbgauge@db2:3306/ --warning 5 --critical 30
    """


@heartbeat_group.command("update", short_help="Write the heartbeat row every --interval.")
@click.argument("node", metavar="[NAME=]DSN|TARGET")
@_connection_options
@click.option("--interval", default="1s", show_default=True, callback=positive_duration,
              metavar="DURATION", help="Time between writes (pt-heartbeat's --interval).")
@click.option("--create-table", is_flag=True,
              help="Create the schema and table if missing (pt-heartbeat's layout).")
@click.option("--allow-read-only", is_flag=True,
              help="Write even while the server is read_only (an account with SUPER or "
                   "READ ONLY ADMIN can): only for a server meant to take these writes. "
                   "Default: refuse, as pt-heartbeat --check-read-only does.")
@click.option("--check-read-only", is_flag=True, hidden=True,
              help="pt-heartbeat's option, accepted: checking is always on.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Log lines on stderr.")
def heartbeat_update(node: str, database: str, table: str, password_env: str | None,
                     password_file: Path | None, config_path: str | None, interval: float,
                     create_table: bool, allow_read_only: bool, check_read_only: bool,
                     log_format: str) -> None:
    """Replace this server's row (keyed by @@server_id) with the current UTC time every
    --interval, in the foreground until SIGTERM or SIGINT (exit 0): run it under
    systemd (deploy/systemd/dbgauge-heartbeat.service) as pt-heartbeat --update
    --daemonize would run. The first write happens before the loop: a wrong DSN,
    password or missing table (without --create-table) exits 2 at once; later failures
    are logged, and the writer reconnects.

    A read-only server (read_only=ON or super_read_only=ON: a replica) gets no write,
    not even --create-table's: the first write exits 2 saying so, and a server that
    turns read-only later (a switchover) is logged once and skipped until it takes
    writes again. --allow-read-only writes there anyway (not through super_read_only).

    \b
    Examples:
      dbgauge heartbeat update mysql://dbgauge@127.0.0.1:3306/ --password-file /etc/dbgauge/pw \\
          --create-table --interval 0.5s
      dbgauge heartbeat update mysql://dbgauge@db9:3306/ --allow-read-only  # read-only on purpose
    """
    from dbgauge.toolkit.heartbeat import HeartbeatWriter
    from dbgauge.toolkit.logs import setup_logging

    setup_logging(log_format, "info")
    try:
        (target,) = _targets((node,), config_path, password_file, password_env,
                             _settings("write", database, table, interval,
                                       allow_read_only=allow_read_only))
        writer = HeartbeatWriter(target, create_table=create_table,
                                 override="pass --allow-read-only")
        writer.beat()
    except DbgaugeError as exc:
        die(exc)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: writer.request_stop())
    writer.run()
    sys.exit(0)


@heartbeat_group.command("monitor", short_help="Print each replica's lag every --interval.")
@click.argument("nodes", nargs=-1, required=True, metavar="[NAME=]DSN|TARGET...")
@_connection_options
@click.option("--interval", default="1s", show_default=True, callback=positive_duration,
              metavar="DURATION", help="Time between readings.")
@click.option("--run-time", callback=optional_positive_duration, metavar="DURATION",
              help="Stop after this long (default: until interrupted).")
@click.option("--master-server-id", "source_server_id", type=click.IntRange(0), metavar="ID",
              help="Measure this server's row (default: the newest row not written by the "
                   "replica itself, which follows a failover).")
@click.option("--utc", is_flag=True,
              help="pt-heartbeat's --utc, accepted: dbgauge always reads the table's times "
                   "as UTC (so a pt-heartbeat writer needs --utc).")
def heartbeat_monitor(nodes: tuple[str, ...], database: str, table: str,
                      password_env: str | None, password_file: Path | None,
                      config_path: str | None, interval: float, run_time: float | None,
                      source_server_id: int | None, utc: bool) -> None:
    """Print each replica's lag every --interval, as pt-heartbeat --monitor does: the
    current lag and its averages over the last 1, 5 and 15 minutes,
    `NAME: 0.42s [ 0.40s, 0.38s, 0.38s ]`. A replica that cannot be read prints its
    error on that line and is tried again next time. Ends on SIGINT/SIGTERM or after
    --run-time (exit 0).

    \b
    Example:
      dbgauge heartbeat monitor replica1=mysql://dbgauge@db2:3306/ --password-env PW
    """
    from dbgauge.toolkit.heartbeat import HeartbeatMonitor

    try:
        targets = _targets(nodes, config_path, password_file, password_env,
                           _settings("read", database, table, interval, source_server_id))
    except DbgaugeError as exc:
        die(exc)
    monitor = HeartbeatMonitor(targets)
    signal.signal(signal.SIGTERM, lambda *_: monitor.request_stop())
    monitor.run(interval, run_time, click.echo)
    sys.exit(0)


@heartbeat_group.command(
    "check", short_help="One lag reading with plugin exit codes (check lag on the table).",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                      "help_option_names": []})
@click.pass_context
def heartbeat_check(ctx: click.Context) -> None:
    """`dbgauge check lag` reading the heartbeat table (dbgauge.heartbeat unless
    --heartbeat-table or pt-heartbeat's -D/--database and --table say otherwise): every
    option of `dbgauge check lag` (--node, --config/--target, --warning/--critical,
    --format...) applies, and pt-heartbeat's --master-server-id and --utc; exit codes
    0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.

    \b
    Example:
      dbgauge heartbeat check --node mysql://dbgauge@db2:3306/ -D percona \\
          --table heartbeat --warning 5 --critical 30
    """
    from dbgauge.cli.check import check_group, usage_error

    try:
        args = pt_heartbeat_args(list(ctx.args))
    except click.UsageError as exc:
        usage_error("heartbeat", exc.format_message())
        ctx.exit(3)
    lag = check_group.get_command(ctx, "lag")
    assert lag is not None
    try:
        lag.main(args, prog_name="dbgauge heartbeat check", standalone_mode=False)
    except click.UsageError as exc:
        usage_error("heartbeat", exc.format_message())
        ctx.exit(3)
    except click.exceptions.Exit as exc:
        ctx.exit(exc.exit_code)


def pt_heartbeat_args(args: list[str]) -> list[str]:
    """`check lag`'s arguments from pt-heartbeat's: -D/--database and --table (or a --node
    pt DSN's D= and t=) become --heartbeat-table DB.TABLE; --utc is what dbgauge always
    does (it reads the table's times as UTC)."""
    from dbgauge.toolkit.dsn import pt_table

    out: list[str] = []
    given: dict[str, str] = {}
    it = iter(args)
    for arg in it:
        key, eq, value = arg.partition("=")
        if key in ("-D", "--database", "--table"):
            value = value if eq else next(it, "")
            if not value:
                raise click.UsageError(f"{key} needs a value")
            given["table" if key == "--table" else "database"] = value
        elif arg.startswith("-D") and len(arg) > 2:
            given["database"] = arg[2:]
        elif arg != "--utc":
            out.append(arg)
    for i in range(1, len(out)):
        if out[i - 1] == "--node":
            db, tbl, out[i] = pt_table(out[i])
            for name, found in (("database", db), ("table", tbl)):
                if found:
                    given.setdefault(name, found)
    explicit = any(a.split("=")[0] == "--heartbeat-table" for a in out)
    if given and explicit:
        raise click.UsageError("give --heartbeat-table or -D/--database and --table, not both")
    if explicit:
        return out
    table = given.get("table", _TABLE)
    full = table if "." in table else f"{given.get('database', _SCHEMA)}.{table}"
    return ["--heartbeat-table", full, *out]
