"""`dbgauge check`: health and split-brain checks for monitoring systems, with
monitoring-plugin output and exit codes."""

from __future__ import annotations

import itertools
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dbgauge.checks.health import HealthCheck, health_checks
from dbgauge.cli.base import RESULT_EXIT, exit_now, finish, positive_duration, seconds
from dbgauge.cli.check_options import health_help, health_options
from dbgauge.toolkit import DEFAULT_HEARTBEAT_TABLE, ENV_CONFIG
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.ranges import Range
from dbgauge.toolkit.redact import redact_args
from dbgauge.toolkit.result import CheckResult, Finding, Status, plugin_result
from dbgauge.toolkit.targets import Deadline

if TYPE_CHECKING:
    from dbgauge.toolkit.targets import Selection

# `-c` is --critical here, as in every monitoring plugin: --config has no short form.
CHECK_CONFIG_OPTION = click.option(
    "--config", "config_path", envvar=ENV_CONFIG, metavar="FILE",
    help=f"YAML config file (default: ${ENV_CONFIG}).")


class _PluginGroup(click.Group):
    """`dbgauge check`: a usage error is one `NAME UNKNOWN - ...` line on stdout, exit 3,
    as the monitoring-plugins guidelines ask (the monitor shows stdout)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *health_checks()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A health check's command is made from the registry when it is first asked for
        (`dbgauge check lag` builds no other check's options)."""
        check = health_checks().get(cmd_name)
        if check is not None and cmd_name not in self.commands:
            self.add_command(_health_command(check))
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """A bare `dbgauge check` is a usage error too: UNKNOWN, not click's exit 2 (which a
        monitor reads as CRITICAL)."""
        if not args and not ctx.resilient_parsing:
            usage_error("check", "no check named: dbgauge check NAME (the list: dbgauge "
                                 "check --help)", help_hint=False)
            ctx.exit(3)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            command = exc.ctx.command if exc.ctx is not None else None
            name = command.name if command is not None and command is not self else "check"
            usage_error(name or "check", exc.format_message())
            ctx.exit(3)


def usage_error(name: str, message: str, *, help_hint: bool = True) -> None:
    """A usage error as a check's output (exit 3 is the caller's): one UNKNOWN plugin line,
    or, when the command line asks for --format json, the JSON document a check prints,
    so a consumer that parses JSON gets JSON whatever went wrong."""
    args = sys.argv[1:]
    message = redact_args(" ".join(message.split()), args)
    if "--format=json" in args or ("--format", "json") in itertools.pairwise(args):
        from dbgauge.toolkit.render.plugin import render_plugin_json

        finding = Finding(Status.UNKNOWN, "", "usage", message)
        click.echo(render_plugin_json(plugin_result(name, [finding], message)), nl=False)
        return
    click.echo(f"{name.upper()} UNKNOWN - {message}" + (" (see --help)" if help_hint else ""))


# One output at a time: the result, or the timeout's UNKNOWN line, never both.
_OUTPUT = threading.Lock()
_EMITTED = threading.Event()
# The nodes' results are in (by the node deadline): the last resort then waits this much
# more for them to be written, rather than drop them on a loaded machine where rendering
# (its imports) took the few tenths of a second left before -t.
_READY = threading.Event()
_GRACE = 2.0


def _plugin_options(f: click.decorators.FC) -> click.decorators.FC:
    """-t/--timeout and -v/--verbose, as every monitoring plugin takes them, and the state
    of a server that is down."""
    f = click.option("--unreachable-state", "down", type=click.Choice(["critical", "unknown"]),
                     default="critical", show_default=True,
                     callback=lambda _c, _p, v: Status[v.upper()],
                     help="State of a node that cannot be reached (refused, timed out, "
                          "password refused): CRITICAL as check_postgres, check_pgsql and "
                          "check_mysql say it, or UNKNOWN.")(f)
    f = click.option("-v", "--verbose", "verbosity", count=True,
                     help="-v each node's reading, -vv also the thresholds, -vvv also "
                          "debug logs on stderr.")(f)
    return click.option("-t", "--timeout", default="10", show_default=True,
                        callback=positive_duration, metavar="SECONDS",
                        help="A node without a result by then (a server that stops answering, "
                             "even mid-query) is UNKNOWN and named; the other nodes' results "
                             "are kept.")(f)


def _node_deadline(timeout: float) -> Deadline:
    """When the nodes' fan-out stops waiting: a little before -t, so the nodes that did
    answer are printed with the silent ones named before the last-resort line."""
    return Deadline.within(timeout - min(0.5, timeout / 5), f"{timeout:g} s (-t/--timeout)")


def _bounded(name: str, fmt: str, timeout: float, verbosity: int,
             work: Callable[[Deadline], CheckResult]) -> CheckResult:
    """`work(deadline)`: the nodes that answer by the deadline keep their results, the
    others are named. Last resort, for what no deadline bounds (a config read, a later
    round of reads): one UNKNOWN line and exit 3 after `timeout` seconds -- a thread
    blocked on a server that stopped answering cannot be interrupted, so the process
    ends."""
    if verbosity >= 3:
        from dbgauge.toolkit.logs import setup_logging

        setup_logging("text", "debug")

    def expire() -> None:
        if _EMITTED.wait(timeout) or (_READY.is_set() and _EMITTED.wait(_GRACE)):
            return
        with _OUTPUT:
            if _EMITTED.is_set():
                return
            detail = (f"no result within {timeout:g} s (-t/--timeout): a server did not "
                      "answer in time")
            result = plugin_result(name, [Finding(Status.UNKNOWN, "", "timeout", detail)],
                                   detail)
            click.echo(_rendered(result, fmt, None, 0).splitlines()[0] if fmt == "text"
                       else _rendered(result, fmt, None, 0), nl=fmt == "text")
            sys.stdout.flush()
            os._exit(3)

    deadline = _node_deadline(timeout)
    threading.Thread(target=expire, name="check-timeout", daemon=True).start()
    result = work(deadline)
    _READY.set()
    return result


PerfThresholds = Mapping[str, tuple[str | None, str | None]]  # metric -> (warn, crit)


def _rendered(result: CheckResult, fmt: str, thresholds: PerfThresholds | None,
              verbosity: int) -> str:
    from dbgauge.toolkit.render.plugin import render_plugin, render_plugin_json

    if fmt == "json":
        return render_plugin_json(result, thresholds)
    return render_plugin(result, thresholds, verbosity)


def _write_docs(ctx: click.Context, _param: click.Parameter, path: Path | None) -> None:
    """--docs FILE: rewrite the health-check table of docs/checks.md (`make docs`)."""
    if path is None or ctx.resilient_parsing:
        return
    from dbgauge.checks.health.docs import update_docs

    click.echo(f"{path}: {'updated' if update_docs(path) else 'up to date'}")
    ctx.exit(0)


@click.group("check", cls=_PluginGroup,
             short_help="Health and split-brain checks with Nagios/Icinga exit codes.")
@click.option("--docs", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              hidden=True, is_eager=True, expose_value=False, callback=_write_docs,
              help="Rewrite the health-check table of FILE (docs/checks.md) and exit.")
def check_group() -> None:
    """One-shot checks for monitoring systems: first line `NAME STATE - summary | perfdata`,
    then one line per finding with its evidence and a remediation hint (printed, never run).

    \b
    Exit codes: 0 OK, 1 WARNING, 2 CRITICAL (also a node that is down, unless
    --unreachable-state unknown), 3 UNKNOWN (a bad option or config, a node without a
    result within -t: named, the others' results kept). Nodes: configured targets (--config,
    --target) or DSNs (--node [NAME=]DSN; the DSN's password, else --password-file or
    --password-env). Thresholds: -w/-c RANGE (10, 10:, ~:10, 10:20, @10:20; 80% a
    share of a limit, 5m a time, as check_postgres writes them; see each check's --help).
    Examples:
      dbgauge check split-brain --config /etc/dbgauge/dbgauge.yaml
      dbgauge check lag --config dbgauge.yaml --target orders-replica -w 10 -c 60
      dbgauge check replication --node mysql://dbgauge@db2:3306/ --password-file pw
    """


def _check_nodes_options(f: click.decorators.FC) -> click.decorators.FC:
    options = (
        click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                     show_default=True, help="json: {status, summary, findings[...]}."),
        click.option("--password-env", metavar="VAR",
                     help="Environment variable holding the password of --node DSNs that "
                          "carry none."),
        click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
                     metavar="FILE", help="File holding the password of --node DSNs that "
                                          "carry none."),
        click.option("-f", "--defaults-file", metavar="FILE", expose_value=False,
                     callback=lambda ctx, _p, v: ctx.meta.__setitem__("defaults_file", v),
                     help="MySQL option file for mysql:// --node DSNs, read instead of "
                          "/etc/my.cnf and ~/.my.cnf ([client] settings; alone: the one "
                          "server it describes; check_mysql's -f)."),
        click.option("-g", "--defaults-group", metavar="GROUP", expose_value=False,
                     callback=lambda ctx, _p, v: ctx.meta.__setitem__("defaults_group", v),
                     help="Also read the option files' [GROUP] for mysql:// --node DSNs, "
                          "beside [client] (check_mysql's -g; alone: the one server they "
                          "describe)."),
        click.option("--node", "node_dsns", multiple=True, metavar="[NAME=]DSN",
                     help="A server to check (repeatable), e.g. replica=mysql://u@db2:3306/."),
        click.option("--target", "--targets", "targets", multiple=True, metavar="NAME[,NAME]",
                     help="Configured target(s) to check (repeatable or comma-separated; "
                          "default: every target of a kind the check applies to)."),
        CHECK_CONFIG_OPTION,
    )
    for option in options:
        f = option(f)
    return f


def _check_emit(result: CheckResult, fmt: str,
                thresholds: PerfThresholds | None = None,
                verbosity: int = 0) -> NoReturn:
    text = _rendered(result, fmt, thresholds, verbosity)
    with _OUTPUT:
        _EMITTED.set()
        click.echo(text, nl=False)
    from dbgauge.checks.nodes import NO_ANSWER

    if any(f.kind == NO_ANSWER for f in result.findings):
        # the silent node's thread is still blocked in a driver call: do not wait for it
        exit_now(RESULT_EXIT["check"][result.status])
    finish("check", result.status)


def _check_failed(name: str, exc: DbgaugeError, fmt: str) -> NoReturn:
    """A check that could not run is UNKNOWN (exit 3), on stdout where monitors read it."""
    detail = str(exc)
    _check_emit(plugin_result(name, [Finding(Status.UNKNOWN, "", "error", detail)], detail),
                fmt)


def _selection(config_path: str | None, targets: tuple[str, ...],
               node_dsns: tuple[str, ...], password_file: Path | None,
               password_env: str | None, heartbeat_table: str | None = None,
               heartbeat_source: int | None = None) -> Selection:
    """The nodes of a check's command line (the config is read only when needed)."""
    from dbgauge.toolkit.targets import needs_config, select

    configured = None
    if needs_config(targets, node_dsns) and config_path is not None:
        from dbgauge import app

        configured = app.load_config(config_path).all_targets()
    return select(targets, node_dsns, configured, password_file=password_file,
                  password_env=password_env, heartbeat_table=heartbeat_table,
                  defaults_file=click.get_current_context().meta.get("defaults_file"),
                  defaults_group=click.get_current_context().meta.get("defaults_group"),
                  heartbeat_source=heartbeat_source)


@check_group.command("split-brain", short_help="Errant GTIDs, writable replicas, two primaries.")
@_check_nodes_options
@_plugin_options
@click.option("--heartbeat-table", default=DEFAULT_HEARTBEAT_TABLE, show_default=True,
              metavar="SCHEMA.TABLE", help="Heartbeat table of --node MySQL-family servers.")
@click.option("--heartbeat-wait", default="2s", show_default=True,
              callback=lambda _c, _p, v: seconds(v), metavar="DURATION",
              help="Time between the two heartbeat reads (0: skip the heartbeat test; at "
                   "most half the time -t leaves after the first reads).")
def check_split_brain_cmd(config_path: str | None, targets: tuple[str, ...],
                          node_dsns: tuple[str, ...], password_file: Path | None,
                          password_env: str | None, fmt: str, heartbeat_table: str,
                          heartbeat_wait: float, timeout: float, verbosity: int,
                          down: Status) -> None:
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
    from dbgauge.checks.split_brain import NAME, check_split_brain

    def work(deadline: Deadline) -> CheckResult:
        nodes = _selection(config_path, targets, node_dsns, password_file, password_env)
        return check_split_brain(nodes, heartbeat_wait=heartbeat_wait,
                                 heartbeat_table=heartbeat_table, deadline=deadline, down=down)

    try:
        result = _bounded(NAME, fmt, timeout, verbosity, work)
    except DbgaugeError as exc:
        _check_failed(NAME, exc, fmt)
    _check_emit(result, fmt, verbosity=verbosity)


def _health_command(check: HealthCheck) -> click.Command:
    """`dbgauge check NAME` for one health check of the registry: its help and options
    are made from the check's declaration (`check_options`)."""
    def command(config_path: str | None, targets: tuple[str, ...],
                node_dsns: tuple[str, ...], password_file: Path | None,
                password_env: str | None, fmt: str, timeout: float, verbosity: int,
                down: Status, warning: Range | None = None, critical: Range | None = None,
                heartbeat_table: str | None = None, source_server_id: int | None = None,
                dbnames: tuple[str, ...] = (), **options: Any) -> None:
        from dbgauge.checks.health.options import check_input
        from dbgauge.checks.health.run import run_health
        from dbgauge.checks.health.scope import per_database

        try:
            given = check_input(check, {**options, "warning": warning, "critical": critical,
                                        "dbnames": dbnames})
            limits, scope = given.limits, given.scope
        except DbgaugeError as exc:  # a threshold the check cannot mean: exit 3
            _check_failed(check.name, exc, fmt)

        def work(deadline: Deadline) -> CheckResult:
            nodes = _selection(config_path, targets, node_dsns, password_file,
                               password_env, heartbeat_table, source_server_id)
            nodes = per_database(nodes, given.dbnames)
            return run_health(check, nodes, limits, deadline=deadline, down=down,
                              scope=scope)

        try:
            result = _bounded(check.name, fmt, timeout, verbosity, work)
        except DbgaugeError as exc:
            _check_failed(check.name, exc, fmt)
        own_limits = check.own_thresholds
        chosen = None if own_limits else limits or check.defaults
        perf = (chosen.perf(check.metric) if chosen else
                own_limits.perf(scope) if own_limits and own_limits.perf and scope else
                given.text_perf)
        _check_emit(result, fmt, perf, verbosity)

    command.__doc__ = health_help(check)
    for option in health_options(check):
        command = option(command)
    return click.command(check.name, short_help=check.summary)(
        _plugin_options(_check_nodes_options(command)))
