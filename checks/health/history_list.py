"""check history-list: InnoDB history list length, the undo records purge has not yet
removed. It grows behind a long-open transaction or a purge that cannot keep up, and
slows every read that must walk old row versions (the mysql_innodb collector's facts:
status variable, INNODB_METRICS or SHOW ENGINE INNODB STATUS, whichever the server has).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds
from dbgauge.toolkit.errors import CheckFailed

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.collectors.mysql_innodb import read_innodb

    length = read_innodb(conn).history_list_length
    if length is None:
        raise CheckFailed("the server reported no InnoDB history list length")
    return Measured(length, f"InnoDB history list length {length:.0f}")


CHECK = HealthCheck(
    name="history-list", summary="InnoDB history list length (MySQL/MariaDB).",
    measures="InnoDB history list length", kinds=frozenset({"mysql"}),
    metric="history_list_length", read=_read, defaults=Thresholds.above(100000.0, 1000000.0),
    unit="entries", finding="history-list")
