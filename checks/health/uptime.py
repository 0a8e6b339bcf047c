"""check uptime: a restart shows as an uptime below the threshold (check_mysql_health's
uptime). MySQL/MariaDB: the Uptime status variable (the mysql_status collector's facts);
PostgreSQL: now() - pg_postmaster_start_time(), read on the server so that clocks do not
matter. The thresholds are lower bounds: `-w 600: -c 300:` warns when the server started
less than ten minutes ago.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds
from dbgauge.toolkit.errors import CheckFailed

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured:
    if node.kind == "mysql":
        from dbgauge.collectors.mysql_status import read_status

        seconds = read_status(conn).uptime
    else:
        from dbgauge.toolkit.db.values import number

        seconds = number(conn.query("check_uptime")[0].get("uptime_seconds"))
    if seconds is None:
        raise CheckFailed("the server did not report its uptime")
    days = seconds / 86400
    return Measured(seconds, f"up {seconds:.0f} s" + (f" ({days:.1f} days)" if days >= 1
                                                      else ""))


CHECK = HealthCheck(
    name="uptime", summary="Seconds since the server started: a restart alerts (lower bounds).",
    measures="seconds since the server started (lower bounds: a restart alerts)",
    kinds=frozenset({"mysql", "postgres"}), metric="uptime_seconds", read=_read,
    defaults=Thresholds.below(600.0, 300.0), unit="seconds", finding="restarted")
