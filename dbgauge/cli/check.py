"""`dbgauge check`: health and split-brain checks for monitoring systems, with
monitoring-plugin output and exit codes."""

from __future__ import annotations

import itertools
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from dbgauge.checks.health import HealthCheck, health_checks
from dbgauge.cli.base import RESULT_EXIT, exit_now, finish, positive_duration, seconds
from dbgauge.toolkit import DEFAULT_HEARTBEAT_TABLE, ENV_CONFIG
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.ranges import Range, parse_range
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


class RangeType(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.3
    """A monitoring-plugin threshold range: 10, 10:, ~:10, 10:20, @10:20."""

    name = "range"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> Range:
        if isinstance(value, Range):
            return value
        try:
            return parse_range(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


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


PerfThresholds = dict[str, tuple[str | None, str | None]]  # metric -> (warn, crit)


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
        click.option("--defaults-file", metavar="FILE", expose_value=False,
                     callback=lambda ctx, _p, v: ctx.meta.__setitem__("defaults_file", v),
                     help="MySQL option file for mysql:// --node DSNs, read instead of "
                          "/etc/my.cnf and ~/.my.cnf ([client] settings; alone: the one "
                          "server it describes)."),
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


_Decorator = Callable[[Callable[..., None]], Callable[..., None]]


def _health_command(check: HealthCheck) -> click.Command:
    """`dbgauge check NAME` for one health check of the registry: its help and options
    are made from the check's declaration."""
    def command(config_path: str | None, targets: tuple[str, ...],
                node_dsns: tuple[str, ...], password_file: Path | None,
                password_env: str | None, fmt: str, timeout: float, verbosity: int,
                down: Status, warning: Range | None = None, critical: Range | None = None,
                heartbeat_table: str | None = None, source_server_id: int | None = None,
                include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
                query: str = "", dbnames: tuple[str, ...] = (),
                include_user: tuple[str, ...] = (), exclude_user: tuple[str, ...] = ()
                ) -> None:
        from dbgauge.checks.health.run import run_health
        from dbgauge.checks.health.scope import Scope, per_database

        given = warning is not None or critical is not None
        text = check.takes_checksum or check.takes_lock_spec
        try:
            limits = check.limits(warning, critical) if given else None
            scope = Scope(include, exclude, query, *(
                (str(warning or ""), str(critical or "")) if text else ("", "")),
                include_user=include_user, exclude_user=exclude_user
            ) if check.scoped else None
            perf = dict(check.perf_thresholds(scope)) \
                if check.perf_thresholds and scope else None
        except DbgaugeError as exc:  # a threshold the check cannot mean: exit 3
            _check_failed(check.name, exc, fmt)

        def work(deadline: Deadline) -> CheckResult:
            nodes = _selection(config_path, targets, node_dsns, password_file,
                               password_env, heartbeat_table, source_server_id)
            nodes = per_database(nodes, dbnames)
            return run_health(check, nodes, limits, deadline=deadline, down=down,
                              scope=scope)

        try:
            result = _bounded(check.name, fmt, timeout, verbosity, work)
        except DbgaugeError as exc:
            _check_failed(check.name, exc, fmt)
        chosen = limits or check.defaults
        _check_emit(result, fmt, chosen.perf(check.metric) if chosen else perf, verbosity)

    command.__doc__ = _health_help(check)
    for option in _health_options(check):
        command = option(command)
    return click.command(check.name, short_help=check.summary)(
        _plugin_options(_check_nodes_options(command)))


def _health_help(check: HealthCheck) -> str:
    defaults = check.defaults
    share = defaults.share if defaults else None
    return (f"{check.summary.rstrip('.')}: see docs/checks.md for what is measured on each "
            "kind of server.\n\n\b\n"
            + ("-c/-w CHECKSUM: the checksum expected (check_postgres' settings_checksum)."
               "\n" if check.takes_checksum else
               "-c/-w LOCKS: check_postgres' lock spec, N (the total) or 'total=N;waiting=N;"
               f"MODE=N', alerting at N or more; default {' and '.join(check.text_defaults)}.\n"
               if check.takes_lock_spec else
               "Thresholds: --warning/--critical, no default: give one or both (as "
               "check_postgres).\n" if defaults and check.needs_thresholds else
               f"Thresholds: --warning/--critical, default {defaults.warning.plain} and "
               f"{defaults.critical.plain} {check.unit}.\n" if defaults else
               "No thresholds: each problem it finds has its own severity.\n")
            + (f"A bare number is a count of {share.count} (as check_postgres reads it), "
               f"N% a share of the limit (0 to 100).\n" if share and share.count else
               "A threshold is a percentage, 0 to 100 (N or N%).\n" if share else
               "Seconds, or a time with its unit (10s, 5m, 1h30m, 1d, '1 minute').\n"
               if defaults and defaults.seconds else
               "Bytes, or a size with its unit (500 kB, 10GB).\n"
               if defaults and defaults.bytes else "")
            + f"Example: dbgauge check {check.name} --config dbgauge.yaml --target NAME"
            + (" --warning W --critical C" if defaults else ""))


def _default(check: HealthCheck, level: Range) -> str:
    return "no default" if check.needs_thresholds else f"default {level}"


def _health_options(check: HealthCheck) -> list[_Decorator]:
    """The options beyond every check's: thresholds, and the heartbeat table of lag."""
    options: list[_Decorator] = []
    if check.defaults is not None:
        options += [
            click.option("-c", "--critical", type=RangeType(), metavar="RANGE",
                         help="CRITICAL when the value is outside RANGE: 10 alerts above "
                              "10, 10: below 10, 10:20 outside 10..20, @10:20 inside it "
                              f"({_default(check, check.defaults.critical)})."),
            click.option("-w", "--warning", type=RangeType(), metavar="RANGE",
                         help="WARNING when the value is outside RANGE, written as for "
                              f"--critical ({_default(check, check.defaults.warning)})."),
        ]
    if check.takes_checksum:
        options += [
            click.option("-c", "--critical", metavar="CHECKSUM",
                         help="CRITICAL when the settings' checksum is not CHECKSUM (0: only "
                              "print it, UNKNOWN)."),
            click.option("-w", "--warning", metavar="CHECKSUM",
                         help="WARNING when the settings' checksum is not CHECKSUM.")]
    if check.takes_lock_spec:
        options += [click.option(f"-{level[0]}", f"--{level}", metavar="LOCKS", help=(
            f"{level.upper()} at this many locks or more: N (the total) or 'total=N;"
            "waiting=N;MODE=N' (MODE: exclusive, accessexclusive, rowexclusive...), as "
            f"check_postgres' locks (default {default}).")) for level, default in
            zip(("warning", "critical"), check.text_defaults, strict=True)][::-1]
    options += _scope_options(check)
    if check.takes_heartbeat_table:
        options.append(click.option(
            "--heartbeat-table", metavar="SCHEMA.TABLE",
            help="Read lag from this heartbeat table on --node servers (configured targets "
                 "use their heartbeat settings)."))
        options.append(click.option(
            "--master-server-id", "source_server_id", type=click.IntRange(0), metavar="ID",
            help="With --heartbeat-table: measure the row of this server_id "
                 "(pt-heartbeat's --master-server-id; default: the newest row not written "
                 "by the replica itself)."))
    return options


def _scope_options(check: HealthCheck) -> list[_Decorator]:
    """check_postgres' --include/--exclude for a check over objects, --query for
    custom-query."""
    options: list[_Decorator] = []
    if check.filters:
        options += [click.option(
            f"--{word}", f"{word}", multiple=True, metavar="NAMES",
            help=f"{word.capitalize()} {check.filters}s by name, as check_postgres: "
                 "comma-separated, repeatable, ~REGEX, SCHEMA. for a schema; exclusion "
                 "first, inclusion brings back.") for word in ("exclude", "include")]
    if check.user_filters:
        options += [click.option(
            f"--{word}user", f"{word}_user", multiple=True, metavar="USERS",
            help=f"{word.capitalize()} by {check.user_filters}, as check_postgres: exact "
                 "names, comma-separated, repeatable; --includeuser wins over --excludeuser."
        ) for word in ("exclude", "include")]
    if "postgres" in check.kinds:
        options.append(click.option(
            "--dbname", "dbnames", multiple=True, metavar="NAMES",
            help="Check PostgreSQL nodes once per database named (comma-separated, "
                 "repeatable), as check_postgres' --dbname: each is a node NODE/DATABASE."))
    if check.takes_query:
        options.append(click.option(
            "--query", required=True, metavar="SQL",
            help="A read-only query whose column `result` (a number) is held against "
                 "the ranges; run in a read-only transaction, at most 1000 rows."))
    return options
