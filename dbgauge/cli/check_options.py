"""The options and help of `dbgauge check NAME` beyond every check's, made from its
declaration (`HealthCheck`): thresholds (ranges, or as written for a check reading its
own), filters, custom-query's --query, a check's own options (--valtype), lag's heartbeat
table, and the monitoring plugins' options a check takes (`plugin_options`:
check_pgsql's -q/-W/-C, check_mysql's -S and -n), with the `Scope` that carries them to
its read (`checks.health.options`, which reads a `checks:` entry the same way)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import click

from dbgauge.checks.health import HealthCheck
from dbgauge.checks.health.counts import CountSpec, parse_count_spec
from dbgauge.checks.health.options import OPTION_PREFIX
from dbgauge.toolkit.ranges import Range, parse_range

Decorator = Callable[[Callable[..., None]], Callable[..., None]]


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


class RangeOrCountType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3
    """A range, or check_postgres' count forms of query_time/txn_idle/txn_time: `+N`
    (N sessions or more), `N for T` (N or more for T or longer)."""

    name = "range-or-count"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> Range | CountSpec:
        if isinstance(value, (Range, CountSpec)):
            return value
        try:
            spec = parse_count_spec(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return spec if spec is not None else RangeType().convert(value, param, ctx)


def health_help(check: HealthCheck) -> str:
    defaults = check.defaults
    share = defaults.share if defaults else None
    return (f"{check.summary.rstrip('.')}: see docs/checks.md for what is measured on each "
            "kind of server.\n\n\b\n"
            + ("-c/-w CHECKSUM: the checksum expected (check_postgres' settings_checksum)."
               "\n" if check.takes_checksum else
               "-c/-w LOCKS: check_postgres' lock spec, N (the total) or 'total=N;waiting=N;"
               f"MODE=N', alerting at N or more; default {' and '.join(check.text_defaults)}.\n"
               if check.takes_lock_spec else
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
        kind = RangeOrCountType() if check.count_forms else RangeType()
        counts = (" Or check_postgres' count forms: +N (N sessions or more), 'N for T' "
                  "(N or more for T or longer)." if check.count_forms else "")
        options += [
            click.option("-c", "--critical", type=kind, metavar="RANGE",
                         help="CRITICAL when the value is outside RANGE: 10 alerts above "
                              "10, 10: below 10, 10:20 outside 10..20, @10:20 inside it "
                              f"({_default(check, check.defaults.critical)}).{counts}"),
            click.option("-w", "--warning", type=kind, metavar="RANGE",
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
    options += _scope_options(check) + _plugin_options(check)
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
            "-q", "--query", required=True, metavar="SQL",
            help="A read-only query whose column `result` (without one, its first "
                 "column, as check_mysql_query reads it) is held against -w/-c (see "
                 "--valtype); run in a read-only transaction, at most 1000 rows."))
    return options


def _plugin_options(check: HealthCheck) -> list[Decorator]:
    """The monitoring plugins' options the check declares, spelled as the plugin does."""
    options: list[Decorator] = []
    if "query" in check.plugin_options:
        options += [
            click.option("-q", "--query", default="", metavar="SQL",
                         help="Also run this read-only query; its value (first column of "
                              "the first row) is judged against -W/-C and is perfdata "
                              "`query` (check_pgsql's -q)."),
            click.option("-W", "--query-warning", type=RangeType(), metavar="RANGE",
                         help="WARNING when the -q value is outside RANGE (check_pgsql's "
                              "-W; no default)."),
            click.option("-C", "--query-critical", type=RangeType(), metavar="RANGE",
                         help="CRITICAL when the -q value is outside RANGE (check_pgsql's "
                              "-C; no default)."),
            click.option("--queryname", "query_name", metavar="NAME",
                         help="The query's name in the text, instead of `the query`."),
        ]
    if "ignore-auth" in check.plugin_options:
        options.append(click.option(
            "-n", "--ignore-auth", is_flag=True,
            help="A refused password is OK: the server answered (check_mysql's -n)."))
    if "replica" in check.plugin_options:
        options.append(click.option(
            "-S", "--replica", is_flag=True,
            help="Each node must be a replica: one replicating from nothing is a WARNING "
                 "(check_mysql's -S; without it such a node is OK, having no lag)."))
    return options
