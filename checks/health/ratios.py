"""check hitratio / commitratio: each database's buffer cache hit ratio and commit ratio
in percent since its statistics were reset (check_postgres' hitratio / commitratio),
the lowest judged, one perfdata item per database.

Worse when lower: a bare level is read as check_postgres reads it, `-w 90%` alerting
below 90 (`90:` in monitoring-plugin form). check_postgres has no default and needs -w
or -c; so does dbgauge. A database with no block read (no transaction) yet has no ratio
and is not judged. `--include`/`--exclude` filter databases by name.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Share,
    Thresholds,
)
from dbgauge.checks.health.scope import Item, Scope, worst_item
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)


def _read(column: str, node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    items = [Item(text(r.get("datname")), value, owner=text(r.get("owner")))
             for r in conn.query("check_database_ratios")
             if (value := number(r.get(column))) is not None]
    return worst_item(node, items, scope, metric=column, what="database",
                      higher_is_worse=False, show="{:.2f}%")


def _check(name: str, column: str, what: str) -> HealthCheck:
    return HealthCheck(
        name=name, summary=f"The lowest {what} of the databases, percent (PostgreSQL).",
        measures=f"each database's {what} in percent (the lowest is judged)",
        kinds=frozenset({"postgres"}), metric=column,
        scoped=lambda node, conn, scope: _read(column, node, conn, scope),
        filters="database", user_filters="database owner",
        defaults=Thresholds(NEVER, NEVER, Share(), lower_is_worse=True), unit="percent",
        finding=name, needs_thresholds=True)


HIT = _check("hitratio", "hit_percent", "buffer cache hit ratio")
COMMIT = _check("commitratio", "commit_percent", "commit ratio")
