"""check last-vacuum / last-analyze: how long since the least recently vacuumed (or
analyzed) user table of the connected database was last vacuumed (analyzed), by hand or
by autovacuum, in seconds (check_postgres' last_vacuum / last_analyze).

Statistics are per database: give a node per database to watch. Tables never vacuumed
(analyzed) have no age; they are counted in the message and perfdata, not judged (a
fresh or tiny table may never need it). When no table has an age -- none at all, or
none ever vacuumed (analyzed) -- there is nothing to judge: UNKNOWN, as check_postgres
says, never OK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
    cannot_tell,
)

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

DAY = 86400.0


def _read(what: str, node: Target, conn: Connection) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number

    row = conn.query("check_maintenance")[0]
    tables = number(row.get("tables")) or 0.0
    never = number(row.get(f"{what}_never")) or 0.0
    age = number(row.get(f"{what}_age"))
    verb = "vacuumed" if what == "vacuum" else "analyzed"
    if age is None:
        return cannot_tell(node, f"{what}-unknown", (
            f"no user table {verb} yet ({tables:.0f} table(s)): nothing to judge"
            if tables else "no user table in this database: nothing to judge (statistics are "
                           "per database: check the database that holds the tables)"))
    days = age / DAY
    text = (f"{row.get(f'{what}_table')} {verb} {age:.0f} s ago"
            + (f" ({days:.1f} days)" if days >= 1 else "")
            + f"; {never:.0f} of {tables:.0f} table(s) never {verb}")
    return Measured(age, text, extra=((f"never_{verb}", never),))


def _check(what: str) -> HealthCheck:
    verb = "vacuumed" if what == "vacuum" else "analyzed"
    return HealthCheck(
        name=f"last-{what}",
        summary=f"Seconds since the least recently {verb} table (PostgreSQL).",
        measures=f"seconds since the least recently {verb} table was {verb}",
        kinds=frozenset({"postgres"}), metric=f"{what}_age_seconds",
        read=lambda node, conn: _read(what, node, conn),
        defaults=Thresholds.above(DAY, 2 * DAY), unit="seconds", finding=f"{what}-age")


VACUUM = _check("vacuum")
ANALYZE = _check("analyze")
