"""The daemon and what an operator runs around it: `serve`, `collect`, `collectors`,
`config check`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dbgauge.cli.base import (
    COMPAT_ONLY_OPTION,
    COMPAT_OPTION,
    CONFIG_OPTION,
    die,
    exit_now,
    finish,
    positive_duration,
)
from dbgauge.toolkit import ENV_CONFIG
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.result import Status

if TYPE_CHECKING:
    from dbgauge.toolkit.peers.collectors import Switches


def _switches(_ctx: click.Context, _param: click.Parameter,
              value: tuple[str, ...]) -> Mapping[str, Switches]:
    """The peers' --[no-]collect.NAME and --[no-]collector.NAME (every other unknown
    option lands here too, and is refused as click refuses one)."""
    from dbgauge.toolkit.peers.collectors import parse_switches

    try:
        return parse_switches(value)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


def _one_listen(_ctx: click.Context, _param: click.Parameter,
                value: tuple[str, ...]) -> str | None:
    """The Go exporters repeat --web.listen-address for several addresses; dbgauge
    listens on one, and says so rather than keep the last silently."""
    if len(value) > 1:
        raise click.UsageError(f"--listen/--web.listen-address given {len(value)} times: "
                               "dbgauge listens on one address ([::]:PORT takes IPv4 and "
                               "IPv6 alike)")
    return value[0] if value else None


def _dumpmaps(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        raise click.UsageError("--dumpmaps (postgres_exporter's) is not taken: `dbgauge "
                               "collectors` lists the collectors, and `dbgauge collectors "
                               "--compat-docs FILE` writes every peer family's dbgauge name")


@click.command(short_help="Run the Prometheus exporter daemon.",
               context_settings={"ignore_unknown_options": True})
@CONFIG_OPTION
@click.option("--listen", "--web.listen-address", "listen", metavar="HOST:PORT",
              multiple=True, callback=_one_listen,
              help="Override daemon.listen (e.g. :9860; [::]:9860 takes IPv4 too).")
@click.option("--web.config.file", "web_config_file", metavar="FILE",
              help="TLS and basic auth, in the Prometheus exporter-toolkit web-config "
                   "format (overrides daemon.web_config_file).")
@click.option("--web.telemetry-path", "telemetry_path", metavar="PATH",
              help="Serve /metrics at PATH instead (as the Go exporters' flag; "
                   "$PG_EXPORTER_WEB_TELEMETRY_PATH with postgres_exporter's variables).")
@click.option("--config.my-cnf", "my_cnf", metavar="FILE",
              help="mysqld_exporter's: a MySQL option file whose [client] user, password, "
                   "host, port or socket make one mysql target named 'mysql' (added to "
                   "--config's targets, or the only one without it); its [client.NAME] "
                   "sections are /probe's auth modules.")
@click.option("--mysqld.address", "mysqld_address", metavar="HOST:PORT",
              help="mysqld_exporter's: the server of the 'mysql' target where the my.cnf "
                   "names none (localhost:3306, or unix:///path/to/mysqld.sock).")
@click.option("--mysqld.username", "mysqld_username", metavar="USER",
              help="mysqld_exporter's: the user where the my.cnf names none; the password "
                   "comes from $MYSQLD_EXPORTER_PASSWORD.")
@click.option("--extend.query-path", "query_path", metavar="FILE",
              help="postgres_exporter's: a queries.yaml for the targets DATA_SOURCE_NAME "
                   "or DATA_SOURCE_URI make (and /probe's).")
@click.option("--auto-discover-databases/--no-auto-discover-databases", "auto_discover",
              default=None, help="postgres_exporter's: read every database of the server.")
@click.option("--config.file", "auth_file", metavar="FILE",
              help="postgres_exporter's postgres_exporter.yml: its auth_modules are "
                   "/probe's for PostgreSQL addresses.")
@click.option("--disable-default-metrics/--no-disable-default-metrics",
              "disable_default_metrics", default=None,
              help="postgres_exporter's: leave out its built-in queries' families "
                   "(pg_stat_database, pg_stat_activity, pg_locks, pg_stat_replication, "
                   "pg_replication_slots).")
@click.option("--disable-settings-metrics/--no-disable-settings-metrics",
              "disable_settings_metrics", default=None,
              help="postgres_exporter's: leave out pg_settings_*.")
@click.option("--constantLabels", "constant_labels", metavar="NAME=VALUE,...",
              help="postgres_exporter's: labels added to the series of its targets.")
@click.option("--exclude-databases", "exclude_databases", metavar="DB,...",
              help="postgres_exporter's: databases --auto-discover-databases leaves out.")
@click.option("--include-databases", "include_databases", metavar="DB,...",
              help="postgres_exporter's: the only databases --auto-discover-databases reads "
                   "(besides the DSN's).")
@click.option("--metric-prefix", "metric_prefix", metavar="pg",
              help="postgres_exporter's; only its default, pg, is taken.")
@click.option("--dumpmaps", is_flag=True, expose_value=False, callback=_dumpmaps,
              help="postgres_exporter's: refused; `dbgauge collectors` and docs/compat.md "
                   "list what is collected and under which names.")
@click.option("--exporter.lock_wait_timeout", "lock_wait_timeout", metavar="SECONDS",
              help="mysqld_exporter's: the mysql target's lock_timeout (2 s by default).")
@click.option("--exporter.log_slow_filter/--no-exporter.log_slow_filter", "log_slow_filter",
              default=None, help="mysqld_exporter's: keep dbgauge's statements out of the "
                                 "slow log (MariaDB, Percona Server).")
@click.option("--tls.insecure-skip-verify/--no-tls.insecure-skip-verify",
              "tls_insecure_skip_verify", default=None,
              help="mysqld_exporter's: taken where no ssl-ca is set (TLS is then unverified "
                   "already); refused with ssl-ca.")
@click.option("--timeout-offset", "timeout_offset", metavar="SECONDS",
              help="mysqld_exporter's: daemon.scrape_timeout_offset (seconds taken off "
                   "Prometheus' scrape timeout).")
@click.option("--web.systemd-socket", "systemd_socket", is_flag=True,
              help="Listen on the socket a systemd .socket unit passes, instead of --listen.")
@click.option("--log.level", "log_level", metavar="LEVEL",
              help="The Go exporters' debug, info, warn or error (overrides daemon.log_level).")
@click.option("--log.format", "log_format", metavar="FORMAT",
              help="The Go exporters' logfmt or json (overrides daemon.log_format).")
@click.version_option(package_name="dbgauge", message="dbgauge, version %(version)s")
@COMPAT_OPTION
@COMPAT_ONLY_OPTION
@click.argument("switches", nargs=-1, type=click.UNPROCESSED, callback=_switches,
                metavar="[--[no-]collect.NAME | --[no-]collector.NAME]...")
def serve(config_path: str | None, listen: str | None, web_config_file: str | None,
          systemd_socket: bool, compat: tuple[str, ...] | None, compat_only: bool,
          switches: Mapping[str, Switches], **peer: Any) -> None:
    """Run the Prometheus exporter daemon (/metrics, /probe, /healthz).

    \b
    SIGHUP reloads the config, the peers' files and the web config (a bad new one is
    logged and the old one kept); SIGTERM stops within a second. /healthz needs no basic
    auth. The Go exporters' --web.listen-address is --listen.
    --compat makes the dashboards and alerts of mysqld_exporter, postgres_exporter
    and pgbouncer_exporter work unchanged (docs/compat.md); --compat-only serves the
    peer's output without dbgauge's own families.
    \b
    mysqld_exporter's and postgres_exporter's start-up spellings work as they do for
    them (docs/compat.md): --config.my-cnf, --mysqld.*, $MYSQLD_EXPORTER_PASSWORD,
    $DATA_SOURCE_NAME, $DATA_SOURCE_URI with $DATA_SOURCE_USER and $DATA_SOURCE_PASS
    (or _FILE), --[no-]collect.NAME, --[no-]collector.NAME, and their /probe?target=
    ADDRESS&auth_module=NAME. The targets they make speak their peer's names too.
    \b
    Examples:
      dbgauge serve --config /etc/dbgauge/dbgauge.yaml --listen :9860 \\
          --web.config.file /etc/dbgauge/web.yml --compat mysqld_exporter
      DATA_SOURCE_NAME=postgresql://exporter@db1:5432/postgres dbgauge serve \\
          --web.listen-address :9187 --extend.query-path /etc/queries.yaml
      MYSQLD_EXPORTER_PASSWORD=... dbgauge serve --mysqld.address db1:3306 \\
          --mysqld.username exporter --collect.binlog_size --web.listen-address :9104
    """
    import os

    from dbgauge import app
    from dbgauge.toolkit.exporter.server import serve as run
    from dbgauge.toolkit.exporter.wiring import with_compat, with_peers
    from dbgauge.toolkit.peers.env import PeerFlags, read_startup

    flags = PeerFlags(switches=switches, **peer)
    try:
        startup = read_startup(flags, os.environ)
        wiring = app.wiring()
        if startup.mysql or startup.postgres or startup.log_level or startup.log_format:
            wiring = with_peers(wiring, app.parse_config, startup, compat=compat is None)
        if compat is not None or compat_only:
            wiring = with_compat(wiring, compat, compat_only)
        code = run(wiring, config_path, listen, web_config_path=web_config_file,
                   telemetry_path=startup.telemetry_path, systemd_socket=systemd_socket)
    except DbgaugeError as exc:
        die(exc)
    logging.shutdown()  # the daemon has stopped cleanly: what is left is the log and streams
    exit_now(code)


@click.command(short_help="Scrape one target once and print the metrics.")
@CONFIG_OPTION
@click.argument("target")
@click.option("--collect", "only", multiple=True, metavar="NAME",
              help="Run only this collector (repeatable).")
@click.option("--timeout", default="10s", show_default=True, callback=positive_duration,
              metavar="DURATION", help="Scrape deadline (10, 10s, 1m).")
@COMPAT_OPTION
@COMPAT_ONLY_OPTION
def collect(config_path: str | None, target: str, only: tuple[str, ...], timeout: float,
            compat: tuple[str, ...] | None, compat_only: bool) -> None:
    """Scrape one TARGET once and print it in Prometheus exposition format.

    Exits 1 when the target is down (dbgauge_up 0), 2 when --collect names a collector
    the target does not run (the message lists those it runs). Examples:
    dbgauge collect --config .sandbox/dbgauge.yaml mariadb-primary
    dbgauge collect --config .sandbox/dbgauge.yaml pg-primary --compat postgres_exporter
    """
    from dbgauge import app
    from dbgauge.toolkit.exporter.fleet import scrape_once
    from dbgauge.toolkit.logs import setup_logging
    from dbgauge.toolkit.render.prometheus import encode

    try:
        config = app.load_config(config_path)
        if compat is not None or compat_only:
            config = config.with_compat(compat, compat_only)
        setup_logging(config.daemon.log_format, "warning")
        config.target(target)
        registry = app.registry()
        results = scrape_once(config, registry, [target], timeout, set(only) or None)
    except DbgaugeError as exc:
        die(exc)
    body, _ = encode(results, specs=registry.specs())
    click.echo(body.decode(), nl=False)
    if not results[0].up:
        click.echo(f"dbgauge: target {target} is down: {results[0].error}", err=True)
        finish("collect", Status.CRITICAL)


@click.command("collectors", short_help="List collectors and their metrics.")
@click.option("--markdown", is_flag=True, help="Print the README metrics reference.")
@click.option("--readme", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Rewrite the metrics reference block in FILE (e.g. README.md).")
@click.option("--compat-docs", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Rewrite the peer exporters' rename tables in FILE (docs/compat.md).")
def list_collectors(markdown: bool, readme: Path | None, compat_docs: Path | None) -> None:
    """List the available collectors per target kind, and whether they are on by default."""
    from dbgauge import app
    from dbgauge.toolkit.docs import (
        COMPAT_BEGIN,
        COMPAT_END,
        compat_reference,
        metrics_reference,
        update_block,
        update_readme,
    )

    collectors = app.registry().all
    if compat_docs is not None:
        changed = update_block(compat_docs, COMPAT_BEGIN, COMPAT_END,
                               compat_reference(app.registry().dialects.values()))
        click.echo(f"{compat_docs}: {'updated' if changed else 'up to date'}")
    if readme is not None:
        changed = update_readme(readme, metrics_reference(collectors))
        click.echo(f"{readme}: {'updated' if changed else 'up to date'}")
    if readme is not None or compat_docs is not None:
        return
    if markdown:
        click.echo(metrics_reference(collectors))
        return
    for c in collectors:
        state = "default" if c.default_enabled else "opt-in"
        click.echo(f"{c.kind:<10} {c.name:<22} {state:<8} {c.help}")


@click.group("config", short_help="Validate configuration files.")
def config_group() -> None:
    """Work with dbgauge configuration files."""


@config_group.command("check", short_help="Validate a config file without connecting.")
@click.argument("file", required=False, envvar=ENV_CONFIG)
def config_check(file: str | None) -> None:
    """Validate FILE without connecting to anything (exit 2 when invalid).

    Checks the YAML, every key and value, DSNs, collector names, and that password
    env vars are set and password files readable. Example: dbgauge config check dbgauge.yaml
    """
    from dbgauge import app

    try:
        config = app.load_config(file)
        targets = config.all_targets()
        for target in targets:
            target.connection_params()
    except DbgaugeError as exc:
        die(exc)
    click.echo(f"{file}: OK, {len(targets)} target(s): " + ", ".join(t.name for t in targets))
