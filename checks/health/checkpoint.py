"""check checkpoint: seconds since the last checkpoint (a restartpoint on a standby), as
pg_control records it (check_postgres' checkpoint). On a standby replaying shipped WAL it
says the standby is still "warm"; on a primary a long gap means a long crash recovery.
check_postgres runs pg_controldata on the server's own disk (--datadir, same host);
dbgauge reads pg_control_checkpoint() over the connection (pg_monitor may run it; a
role without it is UNKNOWN, naming the GRANT). check_postgres needs
-w or -c; so does dbgauge. An idle primary skips checkpoints (nothing to write), so its
age grows with no harm done: set the levels above checkpoint_timeout with room.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.toolkit.db.privileges import query
    from dbgauge.toolkit.db.values import flag, number

    row = query(conn, "check_checkpoint", "EXECUTE on pg_control_checkpoint() (GRANT EXECUTE "
                "ON FUNCTION pg_control_checkpoint() TO the monitoring role)")[0]
    age = number(row.get("age_seconds")) or 0.0
    what = "restartpoint" if flag(row.get("in_recovery")) else "checkpoint"
    return Measured(age, f"last {what} {age:.0f} s ago")


CHECK = HealthCheck(
    name="checkpoint", summary="Seconds since the last checkpoint (PostgreSQL).",
    measures="seconds since the last checkpoint (restartpoint on a standby)",
    kinds=frozenset({"postgres"}), metric="checkpoint_age_seconds", read=_read,
    defaults=Thresholds(NEVER, NEVER), unit="seconds", finding="checkpoint-age",
    needs_thresholds=True)
