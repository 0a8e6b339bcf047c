"""check custom-query: a query of the operator's, whose column `result` is held against
the ranges (check_postgres' custom_query, check_mysql_query). Each row's result is
judged, the worst counts; another column, if any, is perfdata under its own name per
row (check_postgres' "value inside the performance data"). A query without a column
named `result` is judged by its first column, as check_mysql_query and check_pgsql's -q
read it, so their queries move over unchanged. Thresholds may be counts,
times (-w 5m) or sizes (-w 10GB), as check_postgres' valtype integer/time/size; there is
no default (give -w or -c). A result that is not a number is UNKNOWN.

The query runs through the connection's read-only path (`query_read_only`): one
statement, in a READ ONLY transaction that is rolled back, at most MAX_ROWS rows, under
the server-side timeouts -- a monitoring line cannot write or run away.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Scope
from dbgauge.toolkit.errors import CheckFailed, ConfigError
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)
MAX_ROWS = 1000


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    if not scope.query.strip():
        raise ConfigError("custom-query needs --query SQL")
    rows = conn.query_read_only(scope.query, MAX_ROWS)
    if not rows:
        raise CheckFailed("the query returned no row: nothing to judge")
    # the plugins' reading: no column `result`, the first column is it
    result = "result" if "result" in rows[0] else next(iter(rows[0]), "result")
    values = []
    for row in rows:
        value = number(row.get(result))
        if value is None or not math.isfinite(value):
            raise CheckFailed(f"{result} {text(row.get(result))!r} is not a number")
        values.append(value)
    extra: list[tuple[str, float]] = []
    for row in rows:
        for column, cell in row.items():
            got = number(cell) if column != result else None
            if got is not None:
                extra.append((column, got))
    top = max(values)
    return Measured(top, f"result {top:g}" + (f" (largest of {len(values)} rows)"
                                              if len(values) > 1 else ""), extra=extra)


CHECK = HealthCheck(
    name="custom-query",
    summary="A read-only query's `result` column against the ranges (PostgreSQL, MySQL).",
    measures="the column `result` of the --query (else its first column; the largest "
             "row's)",
    kinds=frozenset({"postgres", "mysql"}), metric="result",
    scoped=_read, takes_query=True,
    defaults=Thresholds(NEVER, NEVER, seconds=True, bytes=True), unit="the query's unit",
    finding="custom-query", needs_thresholds=True)
