"""`dbgauge check`: health and split-brain checks for monitoring systems, with
monitoring-plugin output and exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from toolkit.cli.base import CONFIG_OPTION, finish
from toolkit.errors import DbgaugeError
from toolkit.result import CheckResult, Finding, Status, plugin_result

if TYPE_CHECKING:
    from toolkit.targets import Selection


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


@click.group("check", cls=_PluginGroup,
           short_help="Health and split-brain checks with Nagios/Icinga exit codes.")
def check_group() -> None:
    """One-shot checks for monitoring systems: first line `NAME STATE - summary | perfdata`,
    then one line per finding with its evidence and a remediation hint (printed, never run).

    \b
    Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (an unreachable node, a bad
    option or config). Nodes: configured targets (--config, --target) or DSNs (--node
    [NAME=]DSN; the DSN's password, else --password-file or --password-env).
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
                     help="Environment variable holding the password of --node DSNs that "
                          "carry none."),
        click.option("--password-file", type=click.Path(dir_okay=False, path_type=Path),
                     metavar="FILE", help="File holding the password of --node DSNs that "
                                          "carry none."),
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


def _check_emit(result: CheckResult, fmt: str,
                thresholds: dict[str, tuple[float, float]] | None = None) -> NoReturn:
    from toolkit.render.plugin import render_plugin, render_plugin_json

    text = render_plugin_json(result) if fmt == "json" else render_plugin(result, thresholds)
    click.echo(text, nl=False)
    finish("check", result.status)


def _check_failed(name: str, exc: DbgaugeError, fmt: str) -> NoReturn:
    """A check that could not run is UNKNOWN (exit 3), on stdout where monitors read it."""
    detail = str(exc)
    _check_emit(plugin_result(name, [Finding(Status.UNKNOWN, "", "error", detail)], detail),
                fmt)


def _selection(config_path: str | None, targets: tuple[str, ...],
               node_dsns: tuple[str, ...], password_file: Path | None,
               password_env: str | None, heartbeat_table: str | None = None) -> Selection:
    """The nodes of a check's command line (the config is read only when needed)."""
    from toolkit.targets import needs_config, select

    configured = None
    if needs_config(targets, node_dsns) and config_path is not None:
        from toolkit import app

        configured = app.load_config(config_path).all_targets()
    return select(targets, node_dsns, configured, password_file=password_file,
                  password_env=password_env, heartbeat_table=heartbeat_table)


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
    from checks.split_brain import NAME, check_split_brain

    try:
        nodes = _selection(config_path, targets, node_dsns, password_file, password_env)
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
        from checks.health import Thresholds, health_checks, run_health

        try:
            check = health_checks()[name]
            limits = None
            if warning is not None or critical is not None:
                limits = (check.DEFAULTS or Thresholds(0.0, 0.0)).override(warning, critical)
            nodes = _selection(config_path, targets, node_dsns, password_file,
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
