"""check custom-query: a query of the operator's, whose column `result` is held against
-w/-c (check_postgres' custom_query, check_pgsql's -q). Each row's result is judged, the
worst counts; a second column, if any, is perfdata under its own name per row
(check_postgres' "value inside the performance data"). A query without a column named
`result` is judged by its first column, as check_mysql_query and check_pgsql's -q read
it, so their queries move over unchanged. -w or -c must be given.

--valtype is check_postgres': `integer` (the default), `time` (-w 5m, '10 minutes';
the result in seconds) and `size` (-w 10GB; the result in bytes) are numbers held against
monitoring-plugin ranges (`-w 5` alerts above 5, `42:` below 42; without --valtype a
threshold may carry a time or a size unit); `string` compares the result with the -w/-c
strings: CRITICAL when it equals the critical one, else WARNING when it equals the
warning one, as there. --reverse turns each around as check_postgres does: a string
alerts when the result differs from it, a plain level `N` alerts below N. A number
alerts above its level where check_postgres alerts at it (`>=`): the two differ only on
equality. A result that is not a number (but for string) is UNKNOWN.

The query runs through the connection's read-only path (`query_read_only`): one
statement, in a READ ONLY transaction that is rolled back, at most MAX_ROWS rows, under
the server-side timeouts -- a monitoring line cannot write or run away.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    CheckOption,
    HealthCheck,
    Measured,
    NodeOutcome,
    OwnThresholds,
    Thresholds,
    judged,
)
from dbgauge.checks.health.scope import Scope
from dbgauge.toolkit.errors import CheckFailed, ConfigError
from dbgauge.toolkit.ranges import Range
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection, Row
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)
MAX_ROWS = 1000
VALTYPES = ("integer", "string", "time", "size")
_ANY_UNIT = Thresholds(NEVER, NEVER, seconds=True, bytes=True)
_UNITS = {"integer": Thresholds(NEVER, NEVER), "time": replace(_ANY_UNIT, bytes=False),
          "size": replace(_ANY_UNIT, seconds=False)}


def _reversed(rng: Range, option: str) -> Range:
    """--reverse: check_postgres alerts at or below the level: a plain `N` becomes `N:`."""
    if rng.inside or rng.start != 0.0 or not math.isfinite(rng.end):
        raise ConfigError(f"{option} {rng}: --reverse takes a plain level (N), not a range: "
                          "write the range itself instead (N: alerts below N)")
    return replace(rng, start=rng.end, end=math.inf)


def numeric_limits(scope: Scope) -> Thresholds:
    """The user's -w/-c as ranges of the --valtype's unit (ConfigError: exit 3)."""
    valtype = scope.option("valtype")
    base = _UNITS.get(valtype, _ANY_UNIT)
    try:
        limits = base.override(scope.warning or None, scope.critical or None)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (--valtype {valtype})" if valtype else
                          f"{exc} (a string to compare the result with: --valtype string)"
                          ) from None
    if scope.option("reverse"):
        limits = replace(limits, warning=_reversed(limits.warning, "--warning")
                         if scope.warning else limits.warning,
                         critical=_reversed(limits.critical, "--critical")
                         if scope.critical else limits.critical)
    return limits.validate("custom-query")


def _check(scope: Scope) -> None:
    if not scope.warning and not scope.critical:
        raise ConfigError("check custom-query has no default thresholds (as check_postgres): "
                          "give --warning or --critical")
    if scope.option("valtype") != "string":
        numeric_limits(scope)


def _perf(scope: Scope) -> dict[str, tuple[str | None, str | None]]:
    """The ranges as perfdata warn/crit of `result` (a string has none)."""
    return {} if scope.option("valtype") == "string" else numeric_limits(scope).perf("result")


def string_state(result: str, scope: Scope) -> tuple[Status, str]:
    """check_postgres' valtype string: (state, the -w/-c string that matched)."""
    reverse = bool(scope.option("reverse"))
    for status, level in ((Status.CRITICAL, scope.critical), (Status.WARNING, scope.warning)):
        if level and (result != level if reverse else result == level):
            return status, level
    return Status.OK, ""


def _extra(rows: list[Row]) -> list[tuple[str, float]]:
    from dbgauge.toolkit.db.values import number

    return [(column, got) for row in rows for column, cell in row.items()
            if column != "result" and (got := number(cell)) is not None]


def _strings(node: Target, rows: list[Row], scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import text

    findings = []
    for row in rows:
        value = text(row.get("result"))
        status, level = string_state(value, scope)
        if status is not Status.OK:
            how = "is not" if scope.option("reverse") else "is"
            findings.append(Finding(status, node.name, "custom-query",
                                    f"result {value!r} {how} {level!r}"))
    shown = ", ".join(repr(text(r.get("result"))) for r in rows[:3])
    note = f"result {shown}" + (f" (+{len(rows) - 3} rows)" if len(rows) > 3 else "")
    perf = tuple((perf_label(node.name, m), v) for m, v in _extra(rows))
    return NodeOutcome(node.name, tuple(findings), perf, note)


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    if not scope.query.strip():
        raise ConfigError("custom-query needs --query SQL")
    rows = conn.query_read_only(scope.query, MAX_ROWS)
    if not rows:
        raise CheckFailed("the query returned no row: nothing to judge")
    if "result" not in rows[0]:  # the plugins' reading: the first column is the result
        first = next(iter(rows[0]))
        rows = [{"result" if k == first else k: v for k, v in row.items()} for row in rows]
    if scope.option("valtype") == "string":
        return _strings(node, rows, scope)
    values = []
    for row in rows:
        value = number(row.get("result"))
        if value is None or not math.isfinite(value):
            raise CheckFailed(f"result {text(row.get('result'))!r} is not a number (give "
                              "--valtype string to compare it as text)")
        values.append(value)
    worst = min(values) if scope.option("reverse") else max(values)
    measured = Measured(worst, f"result {worst:.15g}" + (
        f" ({'smallest' if scope.option('reverse') else 'largest'} of {len(values)} rows)"
        if len(values) > 1 else ""), extra=_extra(rows))
    return judged(node, numeric_limits(scope), measured, kind="custom-query",
                  metric="result")


CHECK = HealthCheck(
    name="custom-query",
    summary="A read-only query's `result` column against the ranges (PostgreSQL, MySQL).",
    measures="the column `result` of the --query (else its first column; the worst row's): "
             "a number, time, size or string (--valtype)",
    kinds=frozenset({"postgres", "mysql"}), metric="result",
    scoped=_read, takes_query=True,
    defaults=_ANY_UNIT, unit="the query's unit",
    finding="custom-query", needs_thresholds=True,
    own_thresholds=OwnThresholds(
        "RANGE|STRING",
        "a range of the --valtype's unit (10, 10:, ~:10, @10:20; 5m with --valtype time, "
        "10GB with size), or with --valtype string the string the result must not equal; "
        "no default: give one or both", _check, needed=True, perf=_perf),
    options=(CheckOption("valtype", "TYPE", "What `result` is (check_postgres' --valtype): "
                         "integer (default), time (seconds), size (bytes), or string "
                         "(compared with -w/-c).", choices=VALTYPES),
             CheckOption("reverse", "", "Alert the other way (check_postgres' --reverse): "
                         "a string when the result differs, a level N below N.",
                         flag=True)))
