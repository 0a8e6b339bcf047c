"""mysqld_exporter's names (prometheus/mysqld_exporter; Debian's 0.14 and upstream).

Every `mysql_*` family its collectors export, from dbgauge's facts.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors.dialects import _mysqld_more
from dbgauge.collectors.mysql_global_status import GlobalStatusFacts
from dbgauge.toolkit.dialect import Dialect, PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import Sample

UP = PeerSpec("mysql_up", "gauge", "Whether the MySQL server is up.")

FAMILIES = PeerFamilies(
    PeerFamily(UP, "dbgauge_up"),
    PeerFamily(PeerSpec("mysql_global_status_*", "untyped",
                        "Generic metric from SHOW GLOBAL STATUS."),
               "dbgauge_mysql_global_status_<name>"),
    *_mysqld_more.FAMILIES,
)


def _global_status(facts: GlobalStatusFacts) -> Iterator[Sample]:
    for variable, value in facts.values.items():
        yield FAMILIES.sample("mysql_global_status_" + variable.lower(), value)


DIALECT = Dialect(
    name="mysqld_exporter", kind="mysql",
    help="mysqld_exporter's mysql_* names, labels and values",
    up=UP, families=FAMILIES,
    translate={"mysql_global_status": _global_status, **_mysqld_more.TRANSLATE},
)
