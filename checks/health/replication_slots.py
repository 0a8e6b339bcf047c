"""check replication-slots: the WAL each replication slot holds back, in bytes
(check_postgres' replication_slots), one perfdata item per slot.

A slot keeps every WAL file from its restart_lsn on: an abandoned one (its standby or
subscriber gone) fills the disk. Every slot counts, active or not, physical or logical, as
there; the largest is judged. Thresholds are sizes (`-w 200MB -c 1GB`, bare numbers are
bytes) with no default, as in check_postgres: give -w or -c. `--include`/`--exclude`
filter slots by name. No slot at all is OK (nothing holds WAL back); slots all filtered
out is UNKNOWN. `dbgauge check replication` says which slots are inactive, whatever they
hold.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Item, Scope, worst_item
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)  # no default: alerts only when the user gives a level


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import flag, number, text

    rows = conn.query("check_replication_slots")
    items = [Item(text(r.get("slot_name")) or "", number(r.get("retained_bytes")) or 0.0)
             for r in rows]
    got = worst_item(node, items, scope, metric="retained_bytes", what="slot",
                     show="{:.0f} bytes held back", nothing="no replication slot")
    if not isinstance(got, Measured):
        return got
    state = {text(r.get("slot_name")): (text(r.get("slot_type")),
                                        "active" if flag(r.get("active")) else "inactive")
             for r in rows}
    kind, active = state.get(got.evidence.get("object", ""), ("", ""))
    return Measured(got.value, f"{got.text} ({kind}, {active})", got.evidence, got.extra,
                    got.findings)


CHECK = HealthCheck(
    name="replication-slots",
    summary="WAL held back by each replication slot: -w 200MB -c 1GB (PostgreSQL).",
    measures="the WAL each replication slot holds back, in bytes (the largest is judged)",
    kinds=frozenset({"postgres"}), metric="retained_bytes",
    scoped=_read, filters="slot",
    defaults=Thresholds(NEVER, NEVER, bytes=True), unit="bytes", finding="replication-slot",
    needs_thresholds=True)
