"""The options and help of `dbgauge check NAME`, made from the health check's declaration
(thresholds, filters, --query, a check's own options)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import click

from dbgauge.checks.health import HealthCheck
from dbgauge.toolkit.ranges import Range, parse_range

Decorator = Callable[[Callable[..., None]], Callable[..., None]]
OPTION_PREFIX = "opt_"  # a check's own option reaches the command as opt_NAME


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


def health_help(check: HealthCheck) -> str:
    defaults = check.defaults
    share = defaults.share if defaults else None
    return (f"{check.summary.rstrip('.')}: see docs/checks.md for what is measured on each "
            "kind of server.\n\n\b\n"
            + ("-c/-w CHECKSUM: the checksum expected (check_postgres' settings_checksum)."
               "\n" if check.takes_checksum else
               textwrap.fill(f"Thresholds: --warning/--critical "
                             f"{check.own_thresholds.metavar}, {check.own_thresholds.help}.",
                             78) + "\n" if check.own_thresholds else
               "Thresholds: --warning/--critical, no default: give one or both (as "
               "check_postgres).\n" if defaults and check.needs_thresholds else
               f"Thresholds: --warning/--critical, default {defaults.warning.plain} and "
               f"{defaults.critical.plain} {check.unit}.\n" if defaults else
               "No thresholds: each problem it finds has its own severity.\n")
            + ("" if check.own_thresholds else
               f"A bare number is a count of {share.count} (as check_postgres reads it), "
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


def health_options(check: HealthCheck) -> list[Decorator]:
    """The options beyond every check's: thresholds, and the heartbeat table of lag."""
    options: list[Decorator] = []
    own = check.own_thresholds
    if own is not None:
        options += [
            click.option("-c", "--critical", metavar=own.metavar,
                         help=f"CRITICAL at this level: {own.help}."),
            click.option("-w", "--warning", metavar=own.metavar,
                         help="WARNING at this level, written as for --critical.")]
    elif check.defaults is not None:
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
    options += _scope_options(check)
    options += [click.option(f"--{o.name}", f"{OPTION_PREFIX}{o.name.replace('-', '_')}",
                             is_flag=True, help=o.help) if o.flag else
                click.option(f"--{o.name}", f"{OPTION_PREFIX}{o.name.replace('-', '_')}",
                             metavar=o.metavar, help=o.help,
                             type=click.Choice(o.choices) if o.choices else None)
                for o in check.options]
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


def _scope_options(check: HealthCheck) -> list[Decorator]:
    """check_postgres' --include/--exclude for a check over objects, --query for
    custom-query."""
    options: list[Decorator] = []
    if check.filters:
        options += [click.option(
            f"--{word}", f"{word}", multiple=True, metavar="NAMES",
            help=f"{word.capitalize()} {check.filters}s by name, as check_postgres: "
                 "comma-separated, repeatable, ~REGEX, SCHEMA. for a schema; exclusion "
                 "first, inclusion brings back.") for word in ("exclude", "include")]
    if "postgres" in check.kinds:
        options.append(click.option(
            "--dbname", "dbnames", multiple=True, metavar="NAMES",
            help="Check PostgreSQL nodes once per database named (comma-separated, "
                 "repeatable), as check_postgres' --dbname: each is a node NODE/DATABASE."))
    if check.takes_query:
        options.append(click.option(
            "--query", required=True, metavar="SQL",
            help="A read-only query whose column `result` is held against -w/-c "
                 "(see --valtype); run in a read-only transaction, at most 1000 rows."))
    return options
