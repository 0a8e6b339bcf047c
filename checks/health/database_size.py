"""check database-size: the size of every database of the server, in bytes
(check_postgres' database_size), one perfdata item per database.

Thresholds are sizes (`-w 10GB -c '1.1 TB'`, bare numbers are bytes) and have no default,
as in check_postgres: give -w or -c. `--include`/`--exclude` filter databases by name
(check_postgres' rules, checks/health/scope.py). A database the role may not size
(no CONNECT, not in pg_monitor) is not judged and makes the check UNKNOWN, naming the
grant: the one not sized may be the one that is too big.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Item, Scope, worst_item
from dbgauge.toolkit.ranges import Range
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)  # no default: alerts only when the user gives a level


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    rows = conn.query("check_database_size")
    items = [Item(text(r.get("datname")) or "", size, owner=text(r.get("owner"))) for r in rows
             if (size := number(r.get("size_bytes"))) is not None]
    hidden = [text(r.get("datname")) or "" for r in rows if number(r.get("size_bytes")) is None
              and not scope.skips_user(text(r.get("owner")))]
    got = worst_item(node, items, scope, metric="database_size_bytes", what="database",
                     show="{:.0f} bytes")
    hidden = [name for name in hidden if not scope.skips(name)]
    if not hidden or not isinstance(got, Measured):
        return got
    unseen = Finding(Status.UNKNOWN, node.name, "insufficient-privilege",
                     f"{len(hidden)} database(s) not sized by this role ({', '.join(hidden)}): "
                     "GRANT pg_monitor TO the monitoring role (or CONNECT on each database)")
    return Measured(got.value, got.text, got.evidence, got.extra, (*got.findings, unseen))


CHECK = HealthCheck(
    name="database-size",
    summary="Size of each database, bytes or with a unit: -w 10GB (PostgreSQL).",
    measures="the size of each database (the largest is judged)",
    kinds=frozenset({"postgres"}), metric="database_size_bytes",
    scoped=_read, filters="database", user_filters="database owner",
    defaults=Thresholds(NEVER, NEVER), unit="bytes", finding="database-size",
    needs_thresholds=True)
