"""check history-list: InnoDB history list length, the undo records purge has not yet
removed. It grows behind a long-open transaction or a purge that cannot keep up, and
slows every read that must walk old row versions (the mysql_innodb collector's facts:
status variable, INNODB_METRICS or SHOW ENGINE INNODB STATUS, whichever the server has).
"""

from __future__ import annotations

from dbgauge.checks.health.model import Measure, Measured, NodeOutcome, Thresholds
from dbgauge.collectors.mysql_innodb import read_innodb
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured | NodeOutcome:
    length = read_innodb(conn).history_list_length
    if length is None:
        raise CheckFailed("the server reported no InnoDB history list length")
    return Measured(length, f"InnoDB history list length {length:.0f}")


CHECK = Measure(
    NAME="history-list", HELP="InnoDB history list length (undo purge backlog).",
    KINDS=frozenset({"mysql"}), DEFAULTS=Thresholds.above(100000.0, 1000000.0),
    METRIC="history_list_length", KIND="history-list", read=_read)
