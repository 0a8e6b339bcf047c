"""The `dbgauge` command line: the only module that imports click.

Expected failures (DbgaugeError) print one line to stderr and exit with the error's
code; they never show a traceback.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from toolkit import ENV_CONFIG, __version__
from toolkit.errors import DbgaugeError

CONFIG_OPTION = click.option(
    "--config", "-c", "config_path", envvar=ENV_CONFIG, metavar="FILE",
    help=f"YAML config file (default: ${ENV_CONFIG}).",
)


def _die(exc: DbgaugeError) -> NoReturn:
    click.echo(f"dbgauge: error: {exc}", err=True)
    sys.exit(exc.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="dbgauge")
def cli() -> None:
    """dbgauge: operations toolkit for MySQL/MariaDB, PostgreSQL and PgBouncer fleets.

    \b
    Examples:
      dbgauge sandbox up                      # local real servers for demos and tests
      dbgauge serve --config .sandbox/dbgauge.yaml
      dbgauge collect --config dbgauge.yaml pg-primary
      dbgauge config check dbgauge.yaml
    """


@cli.command(short_help="Run the Prometheus exporter daemon.")
@CONFIG_OPTION
@click.option("--listen", metavar="HOST:PORT", help="Override daemon.listen (e.g. :9860).")
@click.option("--web.config.file", "web_config_file", metavar="FILE",
              help="TLS and basic auth, in the Prometheus exporter-toolkit web-config "
                   "format (overrides daemon.web_config_file).")
def serve(config_path: str | None, listen: str | None, web_config_file: str | None) -> None:
    """Run the Prometheus exporter daemon (/metrics, /probe, /healthz).

    \b
    SIGHUP reloads the config and the web config (a bad new one is logged and the old
    one kept); SIGTERM stops cleanly. /healthz needs no basic auth.
    Example: dbgauge serve --config /etc/dbgauge/dbgauge.yaml --listen :9860 \\
             --web.config.file /etc/dbgauge/web.yml
    """
    from toolkit.exporter.server import serve as run

    try:
        sys.exit(run(config_path, listen, web_config_path=web_config_file))
    except DbgaugeError as exc:
        _die(exc)


@cli.command(short_help="Scrape one target once and print the metrics.")
@CONFIG_OPTION
@click.argument("target")
@click.option("--collect", "only", multiple=True, metavar="NAME",
              help="Run only this collector (repeatable).")
@click.option("--timeout", default=10.0, show_default=True, help="Scrape deadline in seconds.")
def collect(config_path: str | None, target: str, only: tuple[str, ...], timeout: float) -> None:
    """Scrape one TARGET once and print it in Prometheus exposition format.

    Exits 1 when the target is down (dbgauge_up 0). Example:
    dbgauge collect --config .sandbox/dbgauge.yaml mariadb-primary
    """
    from toolkit.exporter.render import encode
    from toolkit.exporter.scrape import Scraper
    from toolkit.logs import setup_logging

    try:
        from toolkit.config import load_config

        config = load_config(config_path)
        setup_logging(config.daemon.log_format, "warning")
        config.target(target)
        scraper = Scraper(config)
        try:
            results = scraper.scrape([target], time.monotonic() + timeout, set(only) or None)
        finally:
            scraper.close()
    except DbgaugeError as exc:
        _die(exc)
    body, _ = encode(results)
    click.echo(body.decode(), nl=False)
    if not results[0].up:
        click.echo(f"dbgauge: target {target} is down: {results[0].error}", err=True)
        sys.exit(1)


@cli.command("collectors", short_help="List collectors and their metrics.")
@click.option("--markdown", is_flag=True, help="Print the README metrics reference.")
def list_collectors(markdown: bool) -> None:
    """List the available collectors per target kind, and whether they are on by default."""
    from collectors import ALL
    from toolkit.docs import metrics_reference

    if markdown:
        click.echo(metrics_reference())
        return
    for c in ALL:
        state = "default" if c.default_enabled else "opt-in"
        click.echo(f"{c.kind:<10} {c.name:<22} {state:<8} {c.help}")


@cli.group("config", short_help="Validate configuration files.")
def config_group() -> None:
    """Work with dbgauge configuration files."""


@config_group.command("check", short_help="Validate a config file without connecting.")
@click.argument("file", required=False, envvar=ENV_CONFIG)
def config_check(file: str | None) -> None:
    """Validate FILE without connecting to anything (exit 2 when invalid).

    Checks the YAML, every key and value, DSNs, collector names, and that password
    env vars are set and password files readable. Example: dbgauge config check dbgauge.yaml
    """
    try:
        from toolkit.config import load_config

        config = load_config(file)
        for target in config.targets:
            target.connection_params()
    except DbgaugeError as exc:
        _die(exc)
    click.echo(f"{file}: OK, {len(config.targets)} target(s): "
               + ", ".join(t.name for t in config.targets))


@cli.group("sandbox", short_help="Start/stop local real servers for demos and tests.")
def sandbox_group() -> None:
    """Local real servers (MariaDB, PostgreSQL 15, PgBouncer) on 127.0.0.1 for demos and tests.

    \b
    Ports are BASE+3306/3307 (MariaDB primary/replica), BASE+5432/5433 (PostgreSQL
    primary/standby) and BASE+6432 (PgBouncer); the default base 20000 gives 23306, ...
    """


DIR_OPTION = click.option("--dir", "directory", default=".sandbox", show_default=True,
                          type=click.Path(file_okay=False, path_type=Path),
                          help="Where the sandbox keeps data, sockets, logs and secrets.")


@sandbox_group.command("up", short_help="Start or create the sandbox (idempotent).")
@DIR_OPTION
@click.option("--base-port", default=20000, show_default=True, type=click.IntRange(1024, 59000),
              help="Ports are BASE+3306, +3307, +5432, +5433, +6432.")
def sandbox_up(directory: Path, base_port: int) -> None:
    """Start (or create) the sandbox; idempotent. Prints the dbgauge config it writes."""
    from toolkit import sandbox

    try:
        path = sandbox.up(directory, base_port)
    except DbgaugeError as exc:
        _die(exc)
    click.echo(f"sandbox is up; dbgauge config: {path}")


@sandbox_group.command("down", short_help="Stop the sandbox's own processes.")
@DIR_OPTION
def sandbox_down(directory: Path) -> None:
    """Stop the processes this sandbox started (and only those)."""
    from toolkit import sandbox

    try:
        stopped = sandbox.down(directory)
    except DbgaugeError as exc:
        _die(exc)
    click.echo("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@sandbox_group.command("status", short_help="Show the state of each sandbox server.")
@DIR_OPTION
def sandbox_status(directory: Path) -> None:
    """Show each sandbox instance: running or not, pid, port. Exit 1 if any is down."""
    from toolkit import sandbox

    try:
        rows = sandbox.status(directory)
    except DbgaugeError as exc:
        _die(exc)
    for row in rows:
        state = "running" if row.running else "stopped"
        pid = str(row.pid) if row.pid else "-"
        click.echo(f"{row.name:<16} {state:<8} port {row.port:<6} pid {pid:<8} {row.detail}")
    if not all(row.running for row in rows):
        sys.exit(1)


# --- checksum command (issue 5) goes in this block ---


def _split_list(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _seconds(value: str) -> float:
    from toolkit.units import parse_duration

    try:
        return float(parse_duration(value))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _duration(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    seconds = _seconds(value)
    if seconds <= 0:
        raise click.BadParameter("must be more than 0")
    return seconds


@cli.command(short_help="Find rows that differ between a source and its replicas.")
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
@click.option("--chunk-time", default="0.5", show_default=True, callback=_duration,
              metavar="SECONDS", help="Target time of one chunk.")
@click.option("--whole-table-time", default="2s", show_default=True,
              callback=lambda _c, _p, v: _seconds(v), metavar="SECONDS",
              help="MariaDB pairs: compare a table expected to take at most this long "
                   "whole with CHECKSUM TABLE first (read-only, on every side at once), and "
                   "walk its chunks only if the values differ (0: always walk chunks).")
@click.option("--max-lag", default="1s", show_default=True, callback=_duration,
              metavar="SECONDS", help="Pause while a replica lags more than this.")
@click.option("--max-threads-running", default=25, show_default=True,
              type=click.IntRange(1), metavar="N", help="Pause while the source runs more "
              "statements than this (Threads_running / active backends).")
@click.option("--retries", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Re-checks of a differing chunk or row before it is reported.")
@click.option("--retry-delay", default="0.25", show_default=True, callback=_duration,
              metavar="SECONDS", help="Pause before each re-check.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--print-repair", is_flag=True,
              help="Print the statements that would make each replica match (never run).")
@click.option("--resume", is_flag=True, help="Continue an interrupted run with the same "
              "arguments.")
@click.option("--state-file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Where progress is kept for --resume (default: ~/.local/state/dbgauge/).")
@click.option("--run-time", callback=lambda c, p, v: None if v is None else _duration(c, p, v),
              metavar="SECONDS", help="Stop after this long, resumably (--resume continues).")
@click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="Password for DSNs that carry none.")
def checksum(source_arg: str, replica_args: tuple[str, ...], config_path: str | None,
             tables: tuple[str, ...], exclude: tuple[str, ...], method: str | None,
             chunk_time: float, whole_table_time: float, max_lag: float,
             max_threads_running: int, retries: int,
             retry_delay: float, fmt: str, print_repair: bool, resume: bool,
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
    import json
    import signal

    from checks.drift import ChecksumOptions, Reporter, endpoint, render_text, run_checksum

    class Progress(Reporter):
        """A one-line progress bar on stderr, drawn only on a terminal."""

        def __init__(self) -> None:
            self.tty = sys.stderr.isatty()
            self.drawn = False

        def progress(self, table: str, rows: int, total: int) -> None:
            if not self.tty:
                return
            share = min(1.0, rows / total) if total else 1.0
            bar = "#" * int(share * 30)
            click.echo(f"\r{table[:40]:<40} [{bar:<30}] {share:4.0%} {rows} rows", err=True,
                       nl=False)
            self.drawn = True

        def note(self, text: str) -> None:
            self.clear()
            click.echo(f"dbgauge: {text}", err=True)

        def clear(self) -> None:
            if self.drawn:
                click.echo("\r\033[K", err=True, nl=False)
                self.drawn = False

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    reporter = Progress()
    signal.signal(signal.SIGTERM, stop)
    try:
        from toolkit.redact import register_secret

        targets = None
        if config_path or any("://" not in a for a in (source_arg, *replica_args)):
            from toolkit.config import load_config

            targets = {t.name: t for t in load_config(config_path).targets}
        if password_file is not None:
            try:
                register_secret(password_file.read_text().strip())
            except OSError as exc:
                from toolkit.errors import ConfigError

                raise ConfigError(f"cannot read --password-file {password_file}: "
                                  f"{exc.strerror}") from None
        source = endpoint(source_arg, targets, password_file)
        replicas = [endpoint(a, targets, password_file) for a in replica_args]
        options = ChecksumOptions(
            tables=_split_list(tables), exclude=_split_list(exclude), method=method,
            chunk_time=chunk_time, whole_table_time=whole_table_time, max_lag=max_lag,
            max_threads_running=max_threads_running,
            retries=retries, retry_delay=retry_delay, print_repair=print_repair, resume=resume,
            state_file=state_file, run_time=run_time)
        result = run_checksum(source, replicas, options, reporter)
    except DbgaugeError as exc:
        reporter.clear()
        _die(exc)
    reporter.clear()
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        click.echo(render_text(result))
    sys.exit(result.exit_code)

# --- end checksum command ---

# --- check commands (issue 6) go in this block ---


class _PluginUsageError(click.UsageError):
    exit_code = 3


class _PluginGroup(click.Group):
    """`dbgauge check`: usage errors exit 3 (UNKNOWN), as monitoring plugins must."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            if isinstance(exc, _PluginUsageError):
                raise
            raise _PluginUsageError(exc.format_message(), exc.ctx) from None


@cli.group("check", cls=_PluginGroup,
           short_help="Health and split-brain checks with Nagios/Icinga exit codes.")
def check_group() -> None:
    """One-shot checks for monitoring systems: first line `NAME STATE - summary | perfdata`,
    then one line per finding with its evidence and a remediation hint (printed, never run).

    \b
    Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (an unreachable node, a bad
    option or config). Nodes: configured targets (--config, --target) or DSNs (--node
    [NAME=]DSN, password from --password-file or --password-env, else the DSN).
    Examples:
      dbgauge check split-brain --config /etc/dbgauge/dbgauge.yaml
      dbgauge check lag --config dbgauge.yaml --target orders-replica --warning 10
      dbgauge check replication --node mysql://dbgauge@db2:3306/ --password-file pw
    """


def _check_nodes_options(f: click.decorators.FC) -> click.decorators.FC:
    options = (
        click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                     show_default=True, help="json: {status, summary, findings[...]}."),
        click.option("--password-env", metavar="VAR",
                     help="Environment variable holding the password of --node DSNs."),
        click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
                     metavar="FILE", help="File holding the password of --node DSNs."),
        click.option("--node", "node_dsns", multiple=True, metavar="[NAME=]DSN",
                     help="A server to check (repeatable), e.g. replica=mysql://u@db2:3306/."),
        click.option("--target", "--targets", "targets", multiple=True, metavar="NAME[,NAME]",
                     help="Configured target(s) to check (repeatable or comma-separated; "
                          "default: every target of a kind the check applies to)."),
        CONFIG_OPTION,
    )
    for option in options:
        f = option(f)
    return f


def _check_emit(result: object, fmt: str,
                thresholds: dict[str, tuple[float, float]] | None = None) -> NoReturn:
    from checks import CheckResult
    from checks.findings import render_plugin, render_plugin_json

    assert isinstance(result, CheckResult)
    text = render_plugin_json(result) if fmt == "json" else render_plugin(result, thresholds)
    click.echo(text, nl=False)
    sys.exit(int(result.status))


def _check_failed(name: str, exc: DbgaugeError, fmt: str) -> NoReturn:
    """A check that could not run is UNKNOWN (exit 3), on stdout where monitors read it."""
    from checks import Finding, Status
    from checks.findings import plugin_result

    detail = str(exc)
    _check_emit(plugin_result(name, [Finding(Status.UNKNOWN, "", "error", detail)], detail),
                fmt)


@check_group.command("split-brain", short_help="Errant GTIDs, writable replicas, two primaries.")
@_check_nodes_options
@click.option("--heartbeat-table", default="dbgauge.heartbeat", show_default=True,
              metavar="SCHEMA.TABLE", help="Heartbeat table of --node MySQL-family servers.")
@click.option("--heartbeat-wait", default=2.0, show_default=True,
              type=click.FloatRange(min=0), metavar="SECONDS",
              help="Time between the two heartbeat reads (0: skip the heartbeat test).")
def check_split_brain_cmd(config_path: str | None, targets: tuple[str, ...],
                          node_dsns: tuple[str, ...], password_file: Path | None,
                          password_env: str | None, fmt: str, heartbeat_table: str,
                          heartbeat_wait: float) -> None:
    """Detect writes accepted by a node that is not its topology's one primary: errant
    transactions on replicas (MySQL GTID sets, MariaDB domain-server-seq), writable
    replicas, two writable MySQL-family primaries, two PostgreSQL primaries of one
    system identifier, standbys off their upstream's timeline or ahead of its WAL, and
    two heartbeat writers advancing. Replicas are read before their sources, so a source
    that keeps writing cannot cause a false alarm.

    \b
    Examples:
      dbgauge check split-brain --config dbgauge.yaml --targets db1,db2,db3
      dbgauge check split-brain --node primary=mysql://dbgauge@db1:3306/ \\
          --node replica=mysql://dbgauge@db2:3306/ --password-env DBGAUGE_PW --format json
    """
    from checks.health import select_nodes
    from checks.split_brain import NAME, check_split_brain

    try:
        nodes = select_nodes(config_path, targets, node_dsns, password_file, password_env)
        result = check_split_brain(nodes, heartbeat_wait=heartbeat_wait,
                                   heartbeat_table=heartbeat_table)
    except DbgaugeError as exc:
        _check_failed(NAME, exc, fmt)
    _check_emit(result, fmt)


# name, short help, default thresholds shown in --help (tests compare them with the code)
HEALTH_CHECKS: tuple[tuple[str, str, str | None], ...] = (
    ("replication", "Replication threads running and error-free.", None),
    ("lag", "Replication lag in seconds (heartbeat when configured).", "30 and 120 seconds"),
    ("connections", "Connections in use against the limit, in percent.", "80 and 95 percent"),
    ("pgbouncer-pools", "Clients waiting in PgBouncer pools: the longest wait.",
     "1 and 5 seconds"),
    ("locks", "The oldest current lock wait, in seconds.", "10 and 30 seconds"),
)


def _health_command(name: str, short: str, defaults: str | None) -> None:
    def command(config_path: str | None, targets: tuple[str, ...],
                node_dsns: tuple[str, ...], password_file: Path | None,
                password_env: str | None, fmt: str, warning: float | None = None,
                critical: float | None = None, heartbeat_table: str | None = None) -> None:
        from checks.health import Thresholds, health_checks, run_health, select_nodes

        try:
            check = health_checks()[name]
            limits = None
            if warning is not None or critical is not None:
                limits = (check.DEFAULTS or Thresholds(0.0, 0.0)).override(warning, critical)
            nodes = select_nodes(config_path, targets, node_dsns, password_file,
                                 password_env, heartbeat_table)
            result = run_health(check, nodes, limits)
        except DbgaugeError as exc:
            _check_failed(name, exc, fmt)
        chosen = limits or check.DEFAULTS
        _check_emit(result, fmt,
                    {check.METRIC: (chosen.warning, chosen.critical)} if chosen else None)

    command.__doc__ = (
        f"{short.rstrip('.')}: see docs/checks.md for what is measured on each kind of "
        "server.\n\n\b\n"
        + (f"Thresholds: --warning/--critical, default {defaults}.\n" if defaults else
           "No thresholds: each problem it finds has its own severity.\n")
        + f"Example: dbgauge check {name} --config dbgauge.yaml --target NAME"
        + (" --warning W --critical C" if defaults else ""))
    if defaults:
        command = click.option("--critical", type=float, metavar="N",
                               help=f"CRITICAL at or above N (default: {defaults.split()[2]}).")(
            command)
        command = click.option("--warning", type=float, metavar="N",
                               help=f"WARNING at or above N (default: {defaults.split()[0]}).")(
            command)
    if name == "lag":
        command = click.option("--heartbeat-table", metavar="SCHEMA.TABLE",
                               help="Read lag from this heartbeat table on --node servers "
                                    "(configured targets use their heartbeat settings).")(
            command)
    check_group.command(name, short_help=short)(_check_nodes_options(command))


for _name, _short, _defaults in HEALTH_CHECKS:
    _health_command(_name, _short, _defaults)

# --- end check commands ---

# --- pgtap commands (issue 7) go in this block ---


PGTAP_DSN = click.option(
    "--dsn", envvar="DBGAUGE_PGTAP_DSN", required=True, metavar="DSN",
    help="postgresql://user@host:port/db (env DBGAUGE_PGTAP_DSN). Keep the password out "
         "of the command line: PGPASSWORD or ~/.pgpass work too.",
)


@cli.group("pgtap", short_help="Run pgTAP suites (JUnit, parallel) and generate schema tests.")
def pgtap_group() -> None:
    """pgTAP in CI: a pg_prove-class runner and schema-snapshot test generation.

    \b
    Examples:
      dbgauge pgtap run sql/tests --dsn postgresql://ci@db:5432/app -j 4 --junit junit.xml
      dbgauge pgtap run --runtests --schema test --dsn postgresql://ci@db/app
      dbgauge pgtap generate --dsn postgresql://ci@db/app --schema public > schema_test.sql
    """


@pgtap_group.command("run", short_help="Run pgTAP test files (or runtests()) through psql.")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@PGTAP_DSN
@click.option("-j", "--jobs", "parallel", default=1, show_default=True,
              type=click.IntRange(1, 256), help="Files run at once, each in its own session.")
@click.option("--ext", multiple=True, metavar="EXT",
              help="Extension searched for in directories (repeatable; default .sql and .pg).")
@click.option("-R", "--runtests", is_flag=True,
              help="xUnit mode: call runtests(); with PATHs, each file is sourced first in "
                   "the same session (to create the test functions).")
@click.option("-s", "--schema", metavar="SCHEMA",
              help="Schema of the xUnit test functions (implies --runtests).")
@click.option("-x", "--match", metavar="REGEX",
              help="Regex for xUnit test function names (implies --runtests; default ^test).")
@click.option("--set", "variables", multiple=True, metavar="VAR=VALUE",
              help="psql variable for every file (repeatable).")
@click.option("--pset", "psets", multiple=True, metavar="OPT=VALUE",
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
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Kill a file's psql after this many seconds (the file fails).")
@click.option("--psql", "psql_bin", metavar="PATH",
              help="psql binary (default: psql on PATH; on Debian/Ubuntu the newest "
                   "/usr/lib/postgresql/*/bin/psql, which is what pg_wrapper would run).")
def pgtap_run(paths: tuple[str, ...], dsn: str, parallel: int, ext: tuple[str, ...],
              runtests: bool, schema: str | None, match: str | None,
              variables: tuple[str, ...], psets: tuple[str, ...], junit_path: Path | None,
              raw_tap: bool, install_pgtap: bool, timeout: float | None,
              psql_bin: str | None) -> None:
    """Run pgTAP tests, one psql session per file (pg_prove's psql flags, so \\i, \\ir,
    \\set, \\pset, ON_ERROR_STOP and ON_ERROR_ROLLBACK behave as under pg_prove).

    Directories are searched recursively for .sql and .pg files. A file fails on a failed
    test, a plan mismatch, a TAP parse error, a Bail out!, or an SQL error. Exit status:
    0 all passed, 1 any failure, 2 could not run.

    \b
    Example:
      dbgauge pgtap run sql/tests --dsn postgresql://ci@127.0.0.1:5432/app -j 4 \\
          --set schema=app --junit build/pgtap.xml
    """
    from toolkit.errors import ConfigError
    from toolkit.pgtap import report, runner

    try:
        psql = runner.find_psql(psql_bin)
        runner.psql_target(dsn)  # a bad DSN is a usage error before anything runs
        spec = runner.Runtests(schema, match) if (runtests or schema or match) else None
        if spec is None and not paths:
            raise ConfigError("nothing to run: give test files or directories, or --runtests")
        files = runner.discover(paths, runner.normalise_extensions(ext)) if paths else []
        jobs = [runner.Job(str(p), p) for p in files]
        if not jobs and spec is not None:
            jobs = [runner.Job(spec.call_text, None)]
        options = runner.RunOptions(psql, runner.parse_assignments(variables, "--set"),
                                    runner.parse_assignments(psets, "--pset"), timeout, spec)
        if junit_path is not None and not junit_path.resolve().parent.is_dir():
            raise ConfigError(f"--junit {junit_path}: directory does not exist")
        width = report.name_width([j.name for j in jobs])
        done: dict[int, runner.FileResult] = {}
        next_out = [0]

        def on_done(index: int, result: runner.FileResult) -> None:
            if not raw_tap:
                click.echo(report.file_line(result, width))
                return
            done[index] = result
            while next_out[0] in done:  # raw TAP in file order, whatever finished first
                r = done.pop(next_out[0])
                click.echo(f"# dbgauge pgtap: {r.name}")
                for line in r.lines:
                    click.echo(line)
                if r.stderr:
                    click.echo(r.stderr, err=True, nl=not r.stderr.endswith("\n"))
                next_out[0] += 1

        run = runner.execute(dsn, options, jobs, parallel, install_pgtap=install_pgtap,
                             on_done=on_done,
                             on_note=lambda text: click.echo(f"dbgauge: {text}", err=True))
        if junit_path is not None:
            from toolkit.pgtap import junit as junit_xml

            try:
                junit_xml.write(run.results, junit_path)
            except OSError as exc:
                raise ConfigError(f"cannot write --junit {junit_path}: {exc.strerror}") from None
    except DbgaugeError as exc:
        _die(exc)
    click.echo(report.summary(run.results, run.wall, parallel, run.facts), err=raw_tap)
    sys.exit(0 if run.passed else 1)


@pgtap_group.command("generate", short_help="Write pgTAP tests that pin down a live schema.")
@PGTAP_DSN
@click.option("--schema", "schemas", multiple=True, metavar="SCHEMA",
              help="Schema to snapshot (repeatable; default: every non-system schema).")
@click.option("-o", "--output", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to FILE instead of stdout.")
def pgtap_generate(dsn: str, schemas: tuple[str, ...], output: Path | None) -> None:
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
    from toolkit.errors import ConfigError
    from toolkit.pgtap.generate import generate_from_dsn

    try:
        text = generate_from_dsn(dsn, list(schemas))
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"cannot write {output}: {exc.strerror}") from None
    except DbgaugeError as exc:
        _die(exc)
    if output is None:
        click.echo(text, nl=False)

# --- end pgtap commands ---

# --- validate commands (issue 8) go in this block ---

@cli.group("validate", short_help="Validate PgBouncer and InnoDB Cluster configurations.")
def validate_group() -> None:
    """Validate pgbouncer.ini or InnoDB Cluster my.cnf files, offline and live.

    \b
    Exit codes: 0 no errors, 1 errors found (warnings too with --strict),
    2 could not validate (unreadable file, unreachable server).
    Example: dbgauge validate pgbouncer /etc/pgbouncer/pgbouncer.ini --format sarif
    """


VALIDATE_FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]),
                               default="text", show_default=True,
                               help="sarif: SARIF 2.1.0 for CI code scanning.")
VALIDATE_STRICT = click.option("--strict", is_flag=True, help="Exit 1 on warnings as well.")
VALIDATE_PASSWORD = click.option(
    "--password-file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
    help="Password for DSNs that carry none (keeps it off the command line).")


def _validate_password(path: Path | None) -> str | None:
    from toolkit.errors import ConfigError
    from toolkit.redact import register_secret

    if path is None:
        return None
    try:
        secret = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read password file {path}: {exc.strerror}") from None
    register_secret(secret)
    return secret


def _validate_emit(result: object, fmt: str, rules: dict[str, str], strict: bool,
                   fallback: str | None) -> NoReturn:
    from checks import CheckResult
    from checks.findings import exit_code, render

    assert isinstance(result, CheckResult)
    click.echo(render(result, fmt, rules, fallback_file=fallback), nl=False)
    sys.exit(exit_code(result, strict=strict))


def _pgbouncer_version(_ctx: click.Context, _param: click.Parameter,
                       value: str | None) -> tuple[int, ...] | None:
    from checks.data.pgbouncer_params import KNOWN_VERSIONS, parse_version, version_text

    if value is None:
        return None
    try:
        version = parse_version(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a version like 1.21") from None
    if version not in KNOWN_VERSIONS:
        known = ", ".join(version_text(v) for v in KNOWN_VERSIONS)
        raise click.BadParameter(f"{value} is not in the parameter table ({known})")
    return version


@validate_group.command("pgbouncer", short_help="Check a pgbouncer.ini, offline or live.")
@click.argument("file", type=click.Path(path_type=str))
@click.option("--live", "live_dsn", metavar="DSN",
              help="Admin console to compare with the file (SHOW CONFIG / SHOW DATABASES).")
@click.option("--postgres", "postgres_dsn", metavar="DSN",
              help="PostgreSQL server whose max_connections bounds the pools.")
@click.option("--max-connections", type=click.IntRange(1), metavar="N",
              help="PostgreSQL max_connections, when --postgres is not given.")
@click.option("--reserved-connections", type=click.IntRange(0), default=3, show_default=True,
              metavar="N", help="Reserved slots subtracted from --max-connections.")
@click.option("--fd-limit", type=click.IntRange(1), metavar="N",
              help="PgBouncer's open-files limit (default: this shell's soft limit).")
@click.option("--pgbouncer-version", callback=_pgbouncer_version, metavar="X.Y",
              help="Parameter table to use (default: the live server's, else the latest).")
@VALIDATE_PASSWORD
@VALIDATE_FORMAT
@VALIDATE_STRICT
def validate_pgbouncer_cmd(file: str, live_dsn: str | None, postgres_dsn: str | None,
                           max_connections: int | None, reserved_connections: int,
                           fd_limit: int | None, pgbouncer_version: tuple[int, ...] | None,
                           password_file: Path | None, fmt: str, strict: bool) -> None:
    """Check FILE the way PgBouncer reads it: syntax, every parameter against the
    version's table, auth/pooling/TLS/sizing cross-checks; with --live, drift against
    the running pooler (restart-only keys that differ mean a pending restart).

    \b
    Examples:
      dbgauge validate pgbouncer /etc/pgbouncer/pgbouncer.ini --pgbouncer-version 1.18
      dbgauge validate pgbouncer pgbouncer.ini --max-connections 200 --format sarif
      dbgauge validate pgbouncer pgbouncer.ini \\
          --live postgresql://admin@127.0.0.1:6432/pgbouncer --password-file pw.txt
    """
    from checks.config_pgbouncer import RULES, PgbouncerOptions, validate_pgbouncer

    try:
        opts = PgbouncerOptions(
            version=pgbouncer_version, live_dsn=live_dsn, postgres_dsn=postgres_dsn,
            max_connections=max_connections,
            reserved_connections=reserved_connections if max_connections else 0,
            fd_limit=fd_limit, password=_validate_password(password_file))
        result = validate_pgbouncer(file, opts)
    except DbgaugeError as exc:
        _die(exc)
    _validate_emit(result, fmt, RULES, strict, file)


def _mysql_version(_ctx: click.Context, _param: click.Parameter,
                   value: str) -> tuple[int, ...]:
    import re

    from checks.config_innodb_cluster import version_for

    if not re.fullmatch(r"8\.[04](\.\d+)?", value):
        raise click.BadParameter(f"{value!r}: use 8.0 or 8.4 (or a patch level like 8.0.19)")
    return version_for(value)


@validate_group.command("innodb-cluster",
                        short_help="Check InnoDB Cluster member my.cnf files, offline or live.")
@click.argument("files", nargs=-1, type=click.Path(path_type=str))
@click.option("--mysql-version", default="8.4", show_default=True, callback=_mysql_version,
              metavar="8.0|8.4", help="Server version the files are for.")
@click.option("--read-replica", "read_replicas", multiple=True, metavar="FILE",
              help="my.cnf of a read replica (repeatable); or mark a file '# dbgauge: "
                   "read-replica'.")
@click.option("--router", metavar="FILE", help="mysqlrouter.conf to check against the members.")
@click.option("--live", "live", multiple=True, metavar="DSN",
              help="Member to check live (repeatable): variables, group state, tables.")
@VALIDATE_PASSWORD
@VALIDATE_FORMAT
@VALIDATE_STRICT
def validate_innodb_cluster_cmd(files: tuple[str, ...], mysql_version: tuple[int, ...],
                                read_replicas: tuple[str, ...], router: str | None,
                                live: tuple[str, ...], password_file: Path | None, fmt: str,
                                strict: bool) -> None:
    """Check FILES (one my.cnf per member) against dba.checkInstanceConfiguration()'s
    requirements for the MySQL version, and across members: unique server_id,
    report_host and local_address, one group name and mode, seeds, 3 to 9 members.
    --live runs the same rules on SHOW GLOBAL VARIABLES and reads the group's state.

    \b
    Examples:
      dbgauge validate innodb-cluster m1.cnf m2.cnf m3.cnf --mysql-version 8.4
      dbgauge validate innodb-cluster m1.cnf m2.cnf m3.cnf --router mysqlrouter.conf
      dbgauge validate innodb-cluster --live mysql://admin@db1:3306/ --password-file pw
    """
    from checks.config_innodb_cluster import RULES, ClusterOptions, validate_innodb_cluster
    from toolkit.errors import ConfigError

    try:
        if not files and not live and not read_replicas:
            raise ConfigError("give at least one my.cnf FILE or --live DSN")
        opts = ClusterOptions(version=mysql_version, read_replicas=read_replicas,
                              router=router, live=live,
                              password=_validate_password(password_file))
        result = validate_innodb_cluster(files, opts)
    except DbgaugeError as exc:
        _die(exc)
    fallback = files[0] if files else (read_replicas[0] if read_replicas else None)
    _validate_emit(result, fmt, RULES, strict, fallback)


# --- end validate commands ---


def main() -> None:
    cli(prog_name="dbgauge")


if __name__ == "__main__":
    main()
