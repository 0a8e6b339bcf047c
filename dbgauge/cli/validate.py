"""`dbgauge validate`: PgBouncer and InnoDB Cluster configurations, offline and live."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

import click

from dbgauge.cli.base import die, finish, read_password
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.result import CheckResult


@click.group("validate", short_help="Validate PgBouncer and InnoDB Cluster configurations.")
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


def _validate_emit(result: CheckResult, fmt: str, rules: Mapping[str, str], strict: bool,
                   fallback: str | None) -> NoReturn:
    from dbgauge.toolkit.render.findings import render

    click.echo(render(result, fmt, rules, fallback_file=fallback), nl=False)
    finish("validate --strict" if strict else "validate", result.status)


def _pgbouncer_version(_ctx: click.Context, _param: click.Parameter,
                       value: str | None) -> tuple[int, ...] | None:
    from dbgauge.checks.pgbouncer.params import KNOWN_VERSIONS, table_version
    from dbgauge.toolkit.db.version import version_text

    if value is None:
        return None
    try:
        version = table_version(value)
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
              help="Parameter table to use (default: the live server's version, else the "
                   "installed pgbouncer's, else the latest known; the result says which).")
@click.option("--root", type=click.Path(file_okay=False, path_type=str), metavar="DIR",
              help="Look up the config's absolute paths (auth_file, TLS files, %include) "
                   "under DIR, e.g. a copy of the pooler host's files.")
@VALIDATE_PASSWORD
@VALIDATE_FORMAT
@VALIDATE_STRICT
def validate_pgbouncer_cmd(file: str, live_dsn: str | None, postgres_dsn: str | None,
                           max_connections: int | None, reserved_connections: int,
                           fd_limit: int | None, pgbouncer_version: tuple[int, ...] | None,
                           root: str | None, password_file: Path | None, fmt: str,
                           strict: bool) -> None:
    """Check FILE the way PgBouncer reads it: syntax, every parameter against the
    version's table, auth/pooling/TLS/sizing cross-checks; with --live, drift against
    the running pooler (restart-only keys that differ mean a pending restart).

    \b
    Examples:
      dbgauge validate pgbouncer /etc/pgbouncer/pgbouncer.ini --pgbouncer-version 1.18
      dbgauge validate pgbouncer pgbouncer.ini --max-connections 200 --format sarif
      dbgauge validate pgbouncer host1/etc/pgbouncer/pgbouncer.ini --root host1
      dbgauge validate pgbouncer pgbouncer.ini \\
          --live postgresql://admin@127.0.0.1:6432/pgbouncer --password-file pw.txt
    """
    from dbgauge.checks.pgbouncer import RULES, PgbouncerOptions, validate_pgbouncer
    from dbgauge.checks.pgbouncer.run import installed_version

    try:
        opts = PgbouncerOptions(
            version=pgbouncer_version, live_dsn=live_dsn,
            installed=installed_version() if pgbouncer_version is None and not live_dsn
            else None, postgres_dsn=postgres_dsn,
            max_connections=max_connections,
            reserved_connections=reserved_connections if max_connections else 0,
            fd_limit=fd_limit, password=read_password(password_file), root=root)
        result = validate_pgbouncer(file, opts)
    except DbgaugeError as exc:
        die(exc)
    _validate_emit(result, fmt, RULES, strict, file)


def _mysql_version(_ctx: click.Context, _param: click.Parameter,
                   value: str) -> tuple[int, ...]:
    from dbgauge.checks.innodb_cluster import version_for

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
    from dbgauge.checks.innodb_cluster import RULES, ClusterOptions, validate_innodb_cluster

    try:
        if not files and not live and not read_replicas:
            raise ConfigError("give at least one my.cnf FILE or --live DSN")
        opts = ClusterOptions(version=mysql_version, read_replicas=read_replicas,
                              router=router, live=live,
                              password=read_password(password_file))
        result = validate_innodb_cluster(files, opts)
    except DbgaugeError as exc:
        die(exc)
    fallback = files[0] if files else (read_replicas[0] if read_replicas else None)
    _validate_emit(result, fmt, RULES, strict, fallback)
