"""check last-vacuum / last-analyze: how long since the least recently vacuumed (or
analyzed) user table of the connected database was last vacuumed (analyzed), by hand or
by autovacuum, in seconds (check_postgres' last_vacuum / last_analyze).

Statistics are per database: give a node per database to watch. Tables never vacuumed
(analyzed) have no age; they are counted in the message and perfdata, not judged (a
fresh or tiny table may never need it). When no table has an age -- none at all, or
none ever vacuumed (analyzed) -- there is nothing to judge: UNKNOWN, as check_postgres
says, never OK. One perfdata item per table, `database.schema.table` as check_postgres
labels it; `--include`/`--exclude` pick tables by name (`schema.` a schema). Unlike
check_postgres, system catalogs are not counted (they are vacuumed with the database).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
    cannot_tell,
)
from dbgauge.checks.health.scope import Item

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

DAY = 86400.0


def _read(what: str, node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    verb = "vacuumed" if what == "vacuum" else "analyzed"
    aged: list[Item] = []
    never = 0
    tables = 0
    for r in conn.query("check_maintenance_tables"):
        schema, rel = text(r.get("schemaname")), text(r.get("relname"))
        if scope.skips(rel, schema) or scope.skips_user(text(r.get("owner"))):
            continue
        tables += 1
        age = number(r.get(f"{what}_age"))
        if age is None:
            never += 1
        else:
            aged.append(Item(f"{text(r.get('datname'))}.{schema}.{rel}", age, rel, schema))
    if not aged:
        return cannot_tell(node, f"{what}-unknown", (
            f"no user table {verb} yet ({tables} table(s)): nothing to judge" if tables
            else f"no user table matched {scope.given}" if scope.given
            else "no user table in this database: nothing to judge (statistics are per "
                 "database: check the database that holds the tables, or --dbname)"))
    top = max(aged, key=lambda i: (i.value, i.label))
    days = top.value / DAY
    text_ = (f"{top.schema}.{top.name} {verb} {top.value:.0f} s ago"
             + (f" ({days:.1f} days)" if days >= 1 else "")
             + f"; {never} of {tables} table(s) never {verb}")
    return Measured(top.value, text_, extra=(
        (f"never_{verb}", float(never)),
        *((f"{i.label}:{what}_age_seconds", i.value) for i in sorted(aged, key=lambda i: i.label))))


def _check(what: str) -> HealthCheck:
    verb = "vacuumed" if what == "vacuum" else "analyzed"
    return HealthCheck(
        name=f"last-{what}",
        summary=f"Seconds since the least recently {verb} table (PostgreSQL).",
        measures=f"seconds since the least recently {verb} table was {verb}",
        kinds=frozenset({"postgres"}), metric=f"{what}_age_seconds",
        scoped=lambda node, conn, scope: _read(what, node, conn, scope), filters="relation",
        user_filters="relation owner",
        defaults=Thresholds.above(DAY, 2 * DAY), unit="seconds", finding=f"{what}-age")


VACUUM = _check("vacuum")
ANALYZE = _check("analyze")
