"""`dbgauge status`: the fleet's topology at a glance, one tree per cluster."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from dbgauge.cli.base import CONFIG_OPTION, RESULT_EXIT, die, finish, interrupt_exits, seconds
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.redact import redact_data
from dbgauge.toolkit.result import Status

if TYPE_CHECKING:
    from dbgauge.checks.status.model import Topology
    from dbgauge.toolkit.targets import Target

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen: a watch redraws in place


@click.command("status", short_help="The topology at a glance: one tree per cluster.")
@CONFIG_OPTION
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the documented dbgauge.status/1 document.")
@click.option("--watch", callback=lambda _c, _p, v: None if v is None else _every(v),
              metavar="DURATION", default=None,
              help="Read again every DURATION (5, 5s, 1m; at least 1 s), redrawing in place "
                   "on a terminal (Ctrl-C stops).")
def status(config_path: str | None, fmt: str, watch: float | None) -> None:
    """Discover the topology from the configured targets and show each node: role, up,
    read_only, lag (seconds and bytes), replication threads or WAL receiver, errant
    transactions, oldest lock wait and transaction, PgBouncer's waiting clients.

    \b
    Links: MySQL/MariaDB replica -> source (its channel's host:port, server_id, SHOW
    SLAVE HOSTS), PostgreSQL standby -> upstream (WAL receiver), subscriber -> the
    primary streaming its subscription, PgBouncer -> the servers its databases use.
    Exit code: the worst node's state (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN); on
    Ctrl-C, at once, the state last shown (3 if none was).
    Examples:
      dbgauge status --config /etc/dbgauge/dbgauge.yaml
      dbgauge status --config dbgauge.yaml --watch 5s
      dbgauge status --config dbgauge.yaml --format json | jq '.nodes[] | select(.up | not)'
    """
    shown = _Shown()
    with interrupt_exits(shown.interrupted):  # before the load: Ctrl-C there exits too
        try:
            targets = _targets(config_path)
            _show(targets, fmt, watch, shown)
        except DbgaugeError as exc:
            die(exc)
    assert shown.status is not None  # a one-shot run's; a watch ends only by Ctrl-C
    finish("check", shown.status)


def _every(value: str) -> float:
    """--watch's period: a duration of at least a second (a tighter loop only loads the
    servers)."""
    period = seconds(value)
    if period < 1:
        raise click.BadParameter(f"{value!r} is under 1 s")
    return period


class _Shown:
    """The state of the last status written in full: what Ctrl-C exits with."""

    def __init__(self) -> None:
        self.status: Status | None = None

    def interrupted(self) -> int:
        if self.status is None:
            with contextlib.suppress(Exception):
                sys.stderr.write("dbgauge: interrupted before the first status was read\n")
            return RESULT_EXIT["check"][Status.UNKNOWN]
        return RESULT_EXIT["check"][self.status]


def _targets(config_path: str | None) -> Sequence[Target]:
    from dbgauge import app

    if config_path is None:
        raise ConfigError("no config: pass --config FILE or set DBGAUGE_CONFIG")
    targets = app.load_config(config_path).all_targets()
    if not targets:
        raise ConfigError(f"{config_path}: no targets to show")
    return targets


def _show(targets: Sequence[Target], fmt: str, watch: float | None, shown: _Shown) -> None:
    """Discover and print once, or every `watch` seconds (redrawn in place on a terminal)
    until interrupted."""
    from dbgauge.checks.status.run import discover
    from dbgauge.toolkit.render.status import status_text

    previous: Topology | None = None
    tty = sys.stdout.isatty()
    while True:
        topology = discover(targets, previous)
        doc = redact_data(topology.doc())
        text = json.dumps(doc, indent=2) + "\n" if fmt == "json" else status_text(doc)
        if watch is not None and tty:
            text = CLEAR + text
        click.echo(text, nl=False)
        shown.status = topology.status
        if watch is None:
            return
        previous = topology
        if not tty:
            click.echo("")
        time.sleep(watch)
