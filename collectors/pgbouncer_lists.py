"""pgbouncer_lists: sizes of PgBouncer's internal lists (SHOW LISTS).

Tells at a glance how many client and server connections PgBouncer holds and whether
it is running out of free slots; pools and stats come in their own collector. `read`
returns `ListsFacts` (`check connections` takes used_clients from it), which also carry
the SHOW VERSION text the connection read when it opened (pgbouncer_exporter's
`pgbouncer_version_info` is made from it: no extra query).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

ITEMS = MetricSpec(
    "dbgauge_pgbouncer_list_items", "gauge",
    "Entries in a PgBouncer internal list (SHOW LISTS: databases, users, pools, "
    "free/used/login clients and servers, DNS entries).",
    ("list",),
)
METRICS = MetricTable(ITEMS)


@dataclass(frozen=True)
class ListsFacts:
    """The facts: items per list name, in SHOW LISTS order (rows without a number are
    left out), and the server's SHOW VERSION text ("PgBouncer 1.18.0"; "" if unknown)."""

    items: Mapping[str, float]
    version: str = ""

    @property
    def used_clients(self) -> float:
        """Client connections in use (the used_clients list; 0 when not listed)."""
        return self.items.get("used_clients", 0.0)


def parse_lists(rows: Iterable[Row]) -> dict[str, float]:
    """SHOW LISTS rows (list, items) -> items by list name."""
    out: dict[str, float] = {}
    for row in rows:
        value = number(row.get("items"))
        if value is not None and row.get("list") is not None:
            out[str(row["list"])] = value
    return out


def read_lists(conn: Connection) -> ListsFacts:
    return ListsFacts(parse_lists(conn.query("show_lists")), conn.server.version_string)


class PgBouncerLists(Collector[ListsFacts]):
    name = "pgbouncer_lists"
    help = "PgBouncer internal list sizes from SHOW LISTS."
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = METRICS

    def read(self, conn: Connection) -> ListsFacts:
        return read_lists(conn)

    def samples(self, facts: ListsFacts) -> Iterable[Sample]:
        for name, value in facts.items.items():
            yield Sample(ITEMS.name, value, {"list": name})
