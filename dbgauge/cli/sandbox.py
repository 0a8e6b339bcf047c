"""`dbgauge sandbox`: local real servers for demos and tests."""

from __future__ import annotations

from pathlib import Path

import click

from dbgauge.cli.base import die, finish
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.result import Status


@click.group("sandbox", short_help="Start/stop local real servers for demos and tests.")
def sandbox_group() -> None:
    """Local real servers (MariaDB, PostgreSQL 15 or --pg-version 13-18, PgBouncer) on
    127.0.0.1 for demos and tests.

    \b
    Ports are BASE+3306/3307 (MariaDB primary/replica), BASE+5432/5433/5434 (PostgreSQL
    primary/standby/subscriber) and BASE+6432 (PgBouncer); the default base 20000 gives
    23306, ...
    """


DIR_OPTION = click.option("--dir", "directory", default=".sandbox", show_default=True,
                          type=click.Path(file_okay=False, path_type=Path),
                          help="Where the sandbox keeps data, sockets, logs and secrets.")


BASE_PORT_OPTION = click.option(
    "--base-port", default=None, type=click.IntRange(1024, 58535),
    help="Ports are BASE+3306, +3307 (MariaDB), +5432, +5433, +5434 (PostgreSQL primary, "
         "standby, subscriber), +6432 (PgBouncer), and the generated config's daemon "
         "listens on BASE+7000 (9860 at the default base) [default: the sandbox's own, else "
         "20000].")


PG_VERSION_OPTION = click.option(
    "--pg-version", default=None, type=click.IntRange(13, 18),
    help="The PostgreSQL major of pg-primary, pg-standby and pg-subscriber: 15 is Debian's, "
         "13, 14, 16, 17 and 18 the builds deploy/install-deps fetches [default: the "
         "sandbox's own, else 15].")


@sandbox_group.command("up", short_help="Start or create the sandbox (idempotent).")
@DIR_OPTION
@BASE_PORT_OPTION
@PG_VERSION_OPTION
@click.option("--postgres-only", is_flag=True,
              help="Start only PostgreSQL and PgBouncer, not the MariaDB members.")
def sandbox_up(directory: Path, base_port: int | None, pg_version: int | None,
               postgres_only: bool) -> None:
    """Start (or create) the sandbox; idempotent. Prints the dbgauge config it writes."""
    from dbgauge.toolkit import sandbox

    try:
        path = sandbox.up(directory, base_port, say=_say, pg_version=pg_version,
                          mariadb=not postgres_only)
    except DbgaugeError as exc:
        die(exc)
    click.echo(f"sandbox is up; dbgauge config: {path}")


def _say(message: str) -> None:
    click.echo(f"dbgauge: {message}", err=True)


@sandbox_group.command("reset", short_help="Wipe the sandbox's data and start afresh.")
@DIR_OPTION
@BASE_PORT_OPTION
@PG_VERSION_OPTION
def sandbox_reset(directory: Path, base_port: int | None, pg_version: int | None) -> None:
    """Stop the sandbox, discard every server's data and create it again (its data is
    disposable; the generated passwords are kept)."""
    from dbgauge.toolkit import sandbox

    try:
        path = sandbox.reset(directory, base_port, say=_say, pg_version=pg_version)
    except DbgaugeError as exc:
        die(exc)
    click.echo(f"sandbox was reset and is up; dbgauge config: {path}")


@sandbox_group.command("down", short_help="Stop the sandbox's own processes.")
@DIR_OPTION
def sandbox_down(directory: Path) -> None:
    """Stop the processes this sandbox started (and only those)."""
    from dbgauge.toolkit import sandbox

    try:
        stopped = sandbox.down(directory)
    except DbgaugeError as exc:
        die(exc)
    click.echo("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@sandbox_group.command("status", short_help="Show the state of each sandbox server.")
@DIR_OPTION
def sandbox_status(directory: Path) -> None:
    """Show each sandbox instance: running or not, pid, port. Exit 1 if any is down."""
    from dbgauge.toolkit import sandbox

    try:
        rows = sandbox.status(directory)
    except DbgaugeError as exc:
        die(exc)
    for row in rows:
        state = "running" if row.running else "stopped"
        pid = str(row.pid) if row.pid else "-"
        click.echo(f"{row.name:<16} {state:<8} port {row.port:<6} pid {pid:<8} {row.detail}")
    finish("sandbox status", Status.OK if all(row.running for row in rows) else Status.CRITICAL)


@sandbox_group.command("where", short_help="Where this checkout's demo sandbox lives.")
@click.option("--dir", "directory", metavar="DIR",
              help="Use (and remember) this directory: make demo SANDBOX_DIR=DIR.")
@click.option("--checkout", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="The clone whose demo it is.")
@click.option("--existing", is_flag=True,
              help="Only find the directory (make down): remember nothing new.")
def sandbox_where(directory: str | None, checkout: Path, existing: bool) -> None:
    """Print the demo sandbox's directory: --dir if given, else the one this checkout's last
    demo used (CHECKOUT/.sandbox-dir), else CHECKOUT/.sandbox if the servers' OS users
    (postgres, mysql) can reach it, else /var/tmp/dbgauge-sandbox-HASH, saying why on
    stderr. `make demo` and `make down` use it, so they agree from any clone."""
    from dbgauge.toolkit.sandbox.where import demo_dir

    try:
        where = demo_dir(checkout, directory, record=not existing)
    except OSError as exc:
        die(DbgaugeError(f"cannot record the sandbox directory in {checkout}: {exc.strerror}"))
    if where.note:
        _say(where.note)
    click.echo(str(where.directory))
