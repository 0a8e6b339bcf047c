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

from toolkit import __version__
from toolkit.config import ENV_CONFIG, load_config
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
def serve(config_path: str | None, listen: str | None) -> None:
    """Run the Prometheus exporter daemon (/metrics, /probe, /healthz).

    \b
    SIGHUP reloads the config (a bad new config is logged and the old one kept);
    SIGTERM stops cleanly.
    Example: dbgauge serve --config /etc/dbgauge/dbgauge.yaml --listen :9860
    """
    from toolkit.exporter.server import serve as run

    try:
        sys.exit(run(config_path, listen))
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


# --- pgtap commands (issue 7) go in this block ---

# --- end pgtap commands ---

# --- validate commands (issue 8) go in this block ---

# --- end validate commands ---


def main() -> None:
    cli(prog_name="dbgauge")


if __name__ == "__main__":
    main()
