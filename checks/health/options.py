"""What one run of a health check is given beyond its nodes (thresholds, filters,
--dbname, a query, its own options), read one way from `dbgauge check NAME`'s command
line and from a `checks:` entry of the daemon's config, so that an entry means exactly
what the command line means. An entry's `options:` spell the command's long options
without their dashes (`include`, `includeuser`, `stat`, `query`, `valtype`...); which a
check takes follows from its declaration (`entry_options`), as its command's options do.
Pure: no I/O, no click.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dbgauge.checks.health.counts import CountSpec, parse_count_spec
from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import NEVER, HealthCheck, Thresholds
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import Range, parse_range

OPTION_PREFIX = "opt_"  # a check's own option reaches the command as opt_NAME
Level = Range | CountSpec | str | float | None


@dataclass(frozen=True)
class CheckInput:
    """One run's input: `limits` None means the check's defaults (or it has none),
    `scope` None a check that reads without one, `dbnames` --dbname's databases."""

    limits: Thresholds | None = None
    scope: Scope | None = None
    dbnames: tuple[str, ...] = ()
    # the perfdata warn/crit of -w/-c written as text (lock-count's specs), by metric
    text_perf: Mapping[str, tuple[str | None, str | None]] | None = None


@dataclass(frozen=True)
class EntryOption:
    """A command-line option a `checks:` entry may give: the command's parameter it
    fills and how its value is read (`words`: a list or a comma list, as the repeatable
    option; `text`; `range`; `flag`: true/false; `choice`)."""

    dest: str
    form: str
    choices: tuple[str, ...] = ()
    required: bool = False


def entry_options(check: HealthCheck) -> dict[str, EntryOption]:
    """The options of `dbgauge check NAME` beyond the node selection and -w/-c, by long
    name (a unit test keeps this and the command's options in step)."""
    out: dict[str, EntryOption] = {}
    if check.filters:
        out |= {"exclude": EntryOption("exclude", "words"),
                "include": EntryOption("include", "words")}
    if check.user_filters:
        out |= {"excludeuser": EntryOption("exclude_user", "words"),
                "includeuser": EntryOption("include_user", "words")}
    if "postgres" in check.kinds:
        out["dbname"] = EntryOption("dbnames", "words")
    if check.takes_query:
        out["query"] = EntryOption("query", "text", required=True)
    if "query" in check.plugin_options:
        out |= {"query": EntryOption("query", "text"),
                "query-warning": EntryOption("query_warning", "range"),
                "query-critical": EntryOption("query_critical", "range"),
                "queryname": EntryOption("query_name", "text")}
    if "ignore-auth" in check.plugin_options:
        out["ignore-auth"] = EntryOption("ignore_auth", "flag")
    if "replica" in check.plugin_options:
        out["replica"] = EntryOption("replica", "flag")
    for o in check.options:
        out[o.name] = EntryOption(OPTION_PREFIX + o.name.replace("-", "_"),
                                  "flag" if o.flag else "choice" if o.choices else "text",
                                  o.choices, o.required)
    return out


def written_as_is(check: HealthCheck) -> bool:
    """Whether -w/-c are text the check reads itself (a checksum, a lock spec, an
    expected value) rather than ranges."""
    return check.takes_checksum or check.takes_lock_spec or check.own_thresholds is not None


def check_input(check: HealthCheck, values: Mapping[str, Any]) -> CheckInput:
    """The input of one run from parameters by the command's names (`warning`,
    `critical`, `include`, `opt_valtype`...); ConfigError for what the check cannot mean
    (exit 3 on the command line, a refused config in the daemon)."""
    warning, critical = values.get("warning"), values.get("critical")
    given = (warning is not None or critical is not None) and not written_as_is(check)
    limits = check_limits(check, warning, critical) if given else None
    scope = check_scope(check, values)
    # -w/-c as text: what it cannot mean fails here, before any node is read
    text_perf = dict(check.perf_thresholds(scope)) if check.perf_thresholds and scope else None
    return CheckInput(limits, scope, tuple(values.get("dbnames", ())), text_perf)


def check_scope(check: HealthCheck, values: Mapping[str, Any]) -> Scope | None:
    """The Scope of one run (None: the check reads without one); what the check cannot
    mean (a range -W/-C cannot, its own -w/-c) is a ConfigError before any node is
    read."""
    if check.scoped is None and check.across is None:
        return None
    warning, critical = values.get("warning"), values.get("critical")
    as_written = written_as_is(check)
    scope = Scope(tuple(values.get("include", ())), tuple(values.get("exclude", ())),
                  values.get("query") or "",
                  *((str(warning or ""), str(critical or "")) if as_written else ("", "")),
                  own_options(check, values),
                  query_warning=values.get("query_warning"),
                  query_critical=values.get("query_critical"),
                  query_name=values.get("query_name") or "",
                  replica=bool(values.get("replica")),
                  ignore_auth=bool(values.get("ignore_auth")),
                  include_user=tuple(values.get("include_user", ())),
                  exclude_user=tuple(values.get("exclude_user", ())),
                  warning_count=warning if isinstance(warning, CountSpec) else None,
                  critical_count=critical if isinstance(critical, CountSpec) else None)
    if check.own_thresholds is not None:
        check.own_thresholds.check(scope)
    if "query" in check.plugin_options:
        from dbgauge.checks.health.connection import query_limits

        if (scope.query_warning or scope.query_critical) and not scope.query.strip():
            raise ConfigError("-W/-C judge the value of a query: give it with -q/--query")
        query_limits(scope.query_warning, scope.query_critical)
    return scope


def check_limits(check: HealthCheck, warning: Level, critical: Level) -> Thresholds | None:
    """The check's ranges from -w/-c; a level given in a count form (`+N`, `N for T`) is
    judged by the check's read, so its range never alerts (and, given alone, it leaves
    the other level unset, as any level given alone does)."""
    counts = [isinstance(level, CountSpec) for level in (warning, critical)]
    ranges = [None if counted else level for counted, level in zip(counts, (warning, critical),
                                                                      strict=True)]
    if not any(counts):
        return check.limits(_range(warning), _range(critical))
    if check.defaults is None:
        return None
    limits = check.limits(*map(_range, ranges)) if any(r is not None for r in ranges) else None
    base = limits or replace(check.defaults, warning=NEVER, critical=NEVER)
    return replace(base, warning=NEVER if counts[0] else base.warning,
                   critical=NEVER if counts[1] else base.critical)


def _range(level: Level) -> Range | str | float | None:
    return None if isinstance(level, CountSpec) else level


def own_options(check: HealthCheck, given: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A check's own options as the Scope carries them (a switch: "1" or "")."""
    out = []
    for option in check.options:
        value = given.get(OPTION_PREFIX + option.name.replace("-", "_"))
        out.append((option.name, "1" if value is True else str(value or "")))
    return tuple(out)


def entry_input(check: HealthCheck, warning: float | str | None, critical: float | str | None,
                options: Mapping[str, object]) -> CheckInput:
    """A `checks:` entry's input, read as its command line would be (ConfigError naming
    what is wrong and how the entry says it)."""
    where = f"check {check.name}"
    if check.defaults is None and not written_as_is(check) and (
            warning is not None or critical is not None):
        raise ConfigError(f"{where} takes no warning/critical thresholds: each problem it "
                          "finds has its own severity")
    if check.needs_thresholds and warning is None and critical is None:
        raise ConfigError(f"{where} has no default thresholds: give warning or critical")
    values = entry_values(check, options)
    values["warning"], values["critical"] = (_level(check, level) for level in (warning,
                                                                                  critical))
    got = check_input(check, values)
    if warning is None and critical is None and (
            check.takes_checksum or (check.own_thresholds is not None and check.defaults is None)):
        raise ConfigError(f"{where} holds what it reads against an expected value: give "
                          "it as critical (or warning), as -c/-w on its command line "
                          "(without one it could only ever say UNKNOWN)")
    if got.limits is not None:
        got.limits.validate(where)
    return got


def _level(check: HealthCheck, level: float | str | None) -> Level:
    if level is None:
        return None
    text = str(level)
    if written_as_is(check):
        return text
    if check.count_forms:
        try:
            spec = parse_count_spec(text)
        except ValueError as exc:
            raise ConfigError(f"check {check.name}: {exc}") from None
        if spec is not None:
            return spec
    return level


def entry_values(check: HealthCheck, options: Mapping[str, object]) -> dict[str, Any]:
    """An entry's `options:` as the command's parameters."""
    known = entry_options(check)
    unknown = sorted(set(options) - set(known))
    if unknown:
        takes = (f"it takes {', '.join(sorted(known))}" if known else "it takes none")
        raise ConfigError(f"check {check.name}: unknown option(s) {', '.join(unknown)} "
                          f"({takes}; spelled as the command's long options, without --)")
    missing = [name for name, o in known.items() if o.required and name not in options]
    if missing:
        raise ConfigError(f"check {check.name} needs options: "
                          + ", ".join(f"{{{name}: ...}}" for name in missing)
                          + f" (its --{', --'.join(missing)} on the command line)")
    return {known[name].dest: _value(check.name, name, known[name], value)
            for name, value in options.items()}


def _value(check: str, name: str, option: EntryOption, value: object) -> object:
    where = f"check {check}: option {name}"
    if option.form == "flag":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: give true or false")
        return value
    if option.form == "words":
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(i, str) and i for i in items):
            raise ConfigError(f"{where}: give a name, a comma list or a list of names")
        return tuple(items)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"{where}: give text")
    if option.form != "range" and not isinstance(value, str):
        raise ConfigError(f"{where}: give text (quote it)")
    if isinstance(value, int) and abs(value) > 10**18:
        raise ConfigError(f"{where}: a number of more than 18 digits is not a threshold")
    text = value if isinstance(value, str) else repr(value)
    if option.form == "choice" and text not in option.choices:
        raise ConfigError(f"{where}: {text[:60]!r} is not one of {', '.join(option.choices)}")
    if option.form == "range":
        try:
            return parse_range(text)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return text
