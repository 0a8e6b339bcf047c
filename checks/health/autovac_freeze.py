"""check autovac-freeze: each database's transaction-ID age in percent of
autovacuum_freeze_max_age (check_postgres' autovac_freeze, defaults 90% and 95% as
there), one perfdata item per database. Past 100% an anti-wraparound autovacuum is due;
one that stays past it is being held back (an old transaction, a slot, a cost limit).
`txn-wraparound` measures the same age against the hard 2^31 limit. `--include` /
`--exclude` filter databases by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Share, Thresholds
from dbgauge.checks.health.scope import Item, Scope, worst_item

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    items = []
    for r in conn.query("check_autovac_freeze"):
        age, limit = number(r.get("xid_age")), number(r.get("freeze_max_age"))
        if age is not None and limit:
            items.append(Item(text(r.get("datname")), 100.0 * age / limit))
    return worst_item(node, items, scope, metric="freeze_max_age_percent", what="database",
                      show="{:.1f}% of autovacuum_freeze_max_age")


CHECK = HealthCheck(
    name="autovac-freeze",
    summary="Transaction-ID age, percent of autovacuum_freeze_max_age (PostgreSQL).",
    measures="transaction-ID age of each database, percent of autovacuum_freeze_max_age",
    kinds=frozenset({"postgres"}), metric="freeze_max_age_percent",
    scoped=_read, filters="database",
    defaults=Thresholds.above(90.0, 95.0, Share()), unit="percent", finding="autovac-freeze")
