"""`dbgauge status`: the fleet's topology at a glance, one tree per cluster."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

import click

from dbgauge.cli.base import CONFIG_OPTION, die, finish
from dbgauge.toolkit.errors import ConfigError, DbgaugeError

if TYPE_CHECKING:
    from dbgauge.checks.status.model import Topology

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen: a watch redraws in place


@click.command("status", short_help="The topology at a glance: one tree per cluster.")
@CONFIG_OPTION
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the documented dbgauge.status/1 document.")
@click.option("--watch", type=click.FloatRange(min=1), metavar="SECONDS", default=None,
              help="Read again every SECONDS, redrawing in place on a terminal (Ctrl-C "
                   "stops).")
def status(config_path: str | None, fmt: str, watch: float | None) -> None:
    """Discover the topology from the configured targets and show each node: role, up,
    read_only, lag (seconds and bytes), replication threads or WAL receiver, errant
    transactions, oldest lock wait and transaction, PgBouncer's waiting clients.

    \b
    Links: MySQL/MariaDB replica -> source (its channel's host:port, server_id, SHOW
    SLAVE HOSTS), PostgreSQL standby -> upstream (WAL receiver), subscriber -> the
    primary streaming its subscription, PgBouncer -> the servers its databases use.
    Exit code: the worst node's state (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
    Examples:
      dbgauge status --config /etc/dbgauge/dbgauge.yaml
      dbgauge status --config dbgauge.yaml --watch 5
      dbgauge status --config dbgauge.yaml --format json | jq '.nodes[] | select(.up | not)'
    """
    from dbgauge import app
    from dbgauge.checks.status.run import discover
    from dbgauge.toolkit.render.status import status_text

    try:
        if config_path is None:
            raise ConfigError("no config: pass --config FILE or set DBGAUGE_CONFIG")
        targets = app.load_config(config_path).all_targets()
        if not targets:
            raise ConfigError(f"{config_path}: no targets to show")
        previous: Topology | None = None
        tty = sys.stdout.isatty()
        while True:
            topology = discover(targets, previous)
            doc = topology.doc()
            text = json.dumps(doc, indent=2) + "\n" if fmt == "json" else status_text(doc)
            if watch is not None and tty:
                text = CLEAR + text
            click.echo(text, nl=False)
            if watch is None:
                break
            previous = topology
            if not tty:
                click.echo("")
            time.sleep(watch)
    except DbgaugeError as exc:
        die(exc)
    except KeyboardInterrupt:
        if previous is None:
            raise
        topology = previous
    finish("check", topology.status)
