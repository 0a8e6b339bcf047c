"""check last-autovacuum / last-autoanalyze: seconds since autovacuum last vacuumed
(analyzed) the table it visited longest ago, in the connected database
(check_postgres' last_autovacuum / last_autoanalyze, defaults 1 and 2 days as there).

`last-vacuum` / `last-analyze` count a manual run too; these only autovacuum's, so a
table kept healthy by cron'd VACUUMs alone shows here. Tables autovacuum never visited
have no age: counted, not judged; with none visited at all there is nothing to judge,
UNKNOWN. One perfdata item per table, labelled `database.schema.table` as check_postgres
labels it; `--include`/`--exclude` match the table name (`schema.` a schema).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Item, Scope, kept, worst_item

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

DAY = 86400.0


def _past(what: str) -> str:
    return what + ("d" if what.endswith("e") else "ed")


def _read(what: str, node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    items: list[Item] = []
    never: list[Item] = []
    for r in conn.query("check_last_auto"):
        db, schema, rel = (text(r.get(k)) for k in ("datname", "schemaname", "relname"))
        item = Item(f"{db}.{schema}.{rel}", number(r.get(f"{what}_age")) or -1.0, rel, schema,
                    text(r.get("owner")))
        (never if r.get(f"{what}_age") is None else items).append(item)
    got = worst_item(node, items, scope, metric=f"{what}_age_seconds",
                     what=f"table {_past(what)}", show="{:.0f} s ago")
    unvisited = len(kept(never, scope))
    if isinstance(got, Measured):
        return Measured(got.value, f"{got.text}; {unvisited} table(s) never {_past(what)}",
                        got.evidence, (*got.extra, (f"never_{_past(what)}", unvisited)))
    return got


def _check(what: str) -> HealthCheck:
    verb = _past(what)
    return HealthCheck(
        name=f"last-{what}",
        summary=f"Seconds since the table least recently {verb} (PostgreSQL).",
        measures=f"seconds since autovacuum last {_past(what.removeprefix('auto'))} the table it "
                 f"visited longest ago",
        kinds=frozenset({"postgres"}), metric=f"{what}_age_seconds",
        scoped=lambda node, conn, scope: _read(what, node, conn, scope), filters="relation",
        user_filters="relation owner",
        defaults=Thresholds.above(DAY, 2 * DAY), unit="seconds", finding=f"{what}-age")


AUTOVACUUM = _check("autovacuum")
AUTOANALYZE = _check("autoanalyze")
