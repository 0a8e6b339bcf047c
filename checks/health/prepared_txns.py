"""check prepared-txns: the age of the oldest prepared (two-phase) transaction, in
seconds (check_postgres' prepared_txns, defaults 1 and 30 s as there: most systems use
none, and a forgotten one holds its locks and the vacuum horizon for good). None
prepared is OK. `--include`/`--exclude` filter by database; one perfdata item per
database that has one (its oldest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Item, Scope, worst_item

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    oldest: dict[str, float] = {}
    for r in conn.query("check_prepared_txns"):
        db, age = text(r.get("database")), number(r.get("age_seconds")) or 0.0
        oldest[db] = max(age, oldest.get(db, 0.0))
    items = [Item(db, age) for db, age in oldest.items()]
    return worst_item(node, items, scope, metric="prepared_age_seconds",
                      what="prepared transaction database", show="oldest {:.0f} s",
                      nothing="no prepared transaction")


CHECK = HealthCheck(
    name="prepared-txns",
    summary="Age of the oldest prepared transaction, seconds (PostgreSQL).",
    measures="seconds since the oldest prepared (two-phase) transaction was prepared",
    kinds=frozenset({"postgres"}), metric="prepared_age_seconds",
    scoped=_read, filters="database",
    defaults=Thresholds.above(1.0, 30.0), unit="seconds", finding="prepared-txn")
