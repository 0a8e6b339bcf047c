"""pgbouncer_lists: sizes of PgBouncer's internal lists (SHOW LISTS).

Tells at a glance how many client and server connections PgBouncer holds and whether
it is running out of free slots; pools and stats come in their own collector.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

ITEMS = MetricSpec(
    "dbgauge_pgbouncer_list_items", "gauge",
    "Entries in a PgBouncer internal list (SHOW LISTS: databases, users, pools, "
    "free/used/login clients and servers, DNS entries).",
    ("list",),
)


def parse_lists(rows: Iterable[dict[str, object]]) -> dict[str, float]:
    """SHOW LISTS rows (list, items) -> items by list name."""
    out: dict[str, float] = {}
    for row in rows:
        value = number(row.get("items"))
        if value is not None and row.get("list") is not None:
            out[str(row["list"])] = value
    return out


class PgBouncerLists(Collector):
    name = "pgbouncer_lists"
    help = "PgBouncer internal list sizes from SHOW LISTS."
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = (ITEMS,)

    def collect(self, conn: Connection) -> Iterable[Sample]:
        for name, value in parse_lists(conn.query("show_lists")).items():
            yield Sample(ITEMS.name, value, {"list": name})
