"""check time-sync: how far the server's clock is from this host's, in seconds
(check_postgres' timesync): the server's now() against the local time at the middle of
the round trip, so the network's delay does not count (check_postgres compares whole
seconds taken after the answer). A server whose clock drifts writes wrong timestamps
everywhere: heartbeats and lag, logs, `now()` in the application. Defaults 2 and 5
seconds, as there; on MySQL-family servers too.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds
from dbgauge.toolkit.errors import CheckFailed

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.toolkit.db.values import number

    before = time.time()
    rows = conn.query("check_time")
    after = time.time()
    server = number(rows[0].get("epoch")) if rows else None
    if server is None:
        raise CheckFailed("the server gave no time")
    local = (before + after) / 2
    skew = server - local
    return Measured(abs(skew), f"clock {abs(skew):.3f} s {'ahead of' if skew > 0 else 'behind'}"
                               f" this host's (round trip {after - before:.3f} s)",
                    {"server_epoch": f"{server:.3f}", "local_epoch": f"{local:.3f}"})


CHECK = HealthCheck(
    name="time-sync",
    summary="How far the server's clock is from this host's, in seconds.",
    measures="the difference between the server's clock and this host's, seconds",
    kinds=frozenset({"postgres", "mysql"}), metric="time_offset_seconds", read=_read,
    defaults=Thresholds.above(2.0, 5.0), unit="seconds", finding="clock-skew")
