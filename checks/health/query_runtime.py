"""check query-runtime: how long the server takes to run `SELECT count(1) FROM NAME`, in
seconds (check_postgres' query_runtime with --queryname: a table, a view, or a function
written `name()`). The time is the server's own (EXPLAIN ANALYZE's execution time, as
check_postgres reads it), so the network is not in it. The statement runs through the
read-only path (a READ ONLY transaction, rolled back, under the target's statement
timeout): a function that writes fails rather than writes. Thresholds are times with no
default, as there.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import CheckOption, HealthCheck, Measured, Thresholds
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.checks.health.filters import Scope
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)  # no default: alerts only when the user gives a level
_NAME = re.compile(r"[A-Za-z_][\w.]{0,200}(\(\))?")  # check_postgres' ^[\w\_\.]+(?:\(\))?$


def _read(node: Target, conn: Connection, scope: Scope) -> Measured:
    name = scope.option("queryname")
    if not _NAME.fullmatch(name):
        raise CheckFailed(f"--queryname {name[:60]!r}: give a table, view or function() name "
                          "(letters, digits, _ and .)")
    # the name is checked above: an identifier path, or one with () -- nothing else
    rows = conn.query_read_only(
        f"EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(1) FROM {name}", 10)  # noqa: S608
    plan = next(iter(rows[0].values())) if rows else None
    plan = json.loads(plan) if isinstance(plan, str) else plan
    try:
        seconds = float(plan[0]["Execution Time"]) / 1000.0  # type: ignore[index]
    except (TypeError, KeyError, IndexError, ValueError):
        raise CheckFailed("EXPLAIN ANALYZE gave no execution time") from None
    return Measured(seconds, f"count(1) of {name}: {seconds:.3f} s")


CHECK = HealthCheck(
    name="query-runtime",
    summary="Time to run SELECT count(1) FROM a view or table: --queryname V -w 5s (PostgreSQL).",
    measures="the server's time to run SELECT count(1) FROM --queryname (EXPLAIN ANALYZE)",
    kinds=frozenset({"postgres"}), metric="query_runtime_seconds", scoped=_read,
    defaults=Thresholds(NEVER, NEVER, seconds=True), unit="seconds",
    finding="query-runtime", needs_thresholds=True,
    options=(CheckOption("queryname", "NAME", "The table, view or function() whose "
                         "SELECT count(1) is timed (check_postgres' --queryname).",
                         required=True),))
