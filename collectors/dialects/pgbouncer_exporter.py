"""pgbouncer_exporter's names (prometheus-community/pgbouncer_exporter).

Every `pgbouncer_*` family it exports, from dbgauge's facts.
"""

from __future__ import annotations

from dbgauge.toolkit.dialect import Dialect, PeerFamilies, PeerFamily, PeerSpec

UP = PeerSpec("pgbouncer_up", "gauge", "The pgbouncer scrape succeeded")

FAMILIES = PeerFamilies(
    PeerFamily(UP, "dbgauge_up"),
)

DIALECT = Dialect(
    name="pgbouncer_exporter", kind="pgbouncer",
    help="pgbouncer_exporter's pgbouncer_* names, labels and values",
    up=UP, families=FAMILIES,
)
