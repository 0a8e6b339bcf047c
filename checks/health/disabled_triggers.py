"""check disabled-triggers: how many triggers of the connected database are disabled
(ALTER TABLE ... DISABLE TRIGGER), as check_postgres' disabled_triggers counts them. A
trigger left disabled after a bulk load silently skips its audit rows or foreign-key
checks. check_postgres alerts at 1 or more by default; dbgauge's ranges alert above the
level, so its defaults are 0 and 0 (the same alert), and `-w N` there is `-w N-1` here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.toolkit.db.values import text

    rows = conn.query("check_disabled_triggers")
    names = [f"{text(r.get('table_name'))}=>{text(r.get('tgname'))}" for r in rows]
    shown = ", ".join(names[:10]) + (f" (+{len(names) - 10} more)" if len(names) > 10 else "")
    return Measured(float(len(names)), f"{len(names)} disabled trigger(s)"
                    + (f": {shown}" if names else ""))


CHECK = HealthCheck(
    name="disabled-triggers", summary="Disabled triggers in the database (PostgreSQL).",
    measures="triggers disabled in the connected database", kinds=frozenset({"postgres"}),
    metric="disabled_triggers", read=_read, defaults=Thresholds.above(0, 0), unit="triggers",
    finding="disabled-trigger")
