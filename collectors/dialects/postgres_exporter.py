"""postgres_exporter's names (prometheus-community/postgres_exporter; Debian's 0.11 and
upstream).

Every `pg_*` family its default collectors export, from dbgauge's facts.
"""

from __future__ import annotations

from dbgauge.collectors.dialects import _postgres_tables
from dbgauge.toolkit.dialect import Dialect, PeerFamilies, PeerFamily, PeerSpec

UP = PeerSpec("pg_up", "gauge", "Whether the last scrape of metrics from PostgreSQL was "
              "able to connect to the server (1 for yes, 0 for no).")

FAMILIES = PeerFamilies(
    PeerFamily(UP, "dbgauge_up"),
    *_postgres_tables.FAMILIES,
)

DIALECT = Dialect(
    name="postgres_exporter", kind="postgres",
    help="postgres_exporter's pg_* names, labels and values",
    up=UP, families=FAMILIES,
    translate={**_postgres_tables.TRANSLATE},
    collectors=("postgres_tables",),
)
