"""check bloat: the most wasted space of a table or index in the connected database,
in bytes, by check_postgres' bloat estimate (relpages against what reltuples of rows of
pg_stats' average width should fill; defaults 1 GB and 5 GB as there), one perfdata item
per table (`schema.table`) and index (its name) as check_postgres labels them.

An estimate, as check_postgres says: it trusts the last ANALYZE, and is rough for
indexes. Differences: sizes only (check_postgres' `20%` and `150 M and 20%` forms are not
provided); check_postgres' small-relation cut-off (indexes under 10 wasted pages) is
not applied; and a table the role may not SELECT, whose column widths pg_stats hides,
is not judged (check_postgres estimates it at 2048 bytes a column: never bloated): the
check is UNKNOWN naming the grant (the few superuser-only catalogs, pg_authid and
the like, are left out quietly). `--include`/`--exclude` match the table name
(`schema.` a schema), as there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Item, worst_item
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection, Row
    from dbgauge.toolkit.targets import Target

GB = 2.0 ** 30


def _items(rows: list[Row], scope: Scope) -> tuple[list[Item], list[str]]:
    from dbgauge.toolkit.db.values import flag, number, text

    items: dict[str, Item] = {}
    hidden: list[str] = []
    for r in rows:
        schema, table = text(r.get("schemaname")), text(r.get("tablename"))
        if not flag(r.get("readable")):  # a few catalogs are superuser's: left out
            if schema != "pg_catalog" and not scope.skips(table, schema):
                hidden.append(f"{schema}.{table}")
            continue
        name = f"{schema}.{table}"
        items[name] = Item(name, number(r.get("wasted_bytes")) or 0.0, table, schema)
        index = text(r.get("iname"))
        if index:  # an index counts with its table's filter (check_postgres' rule)
            items[index] = Item(index, number(r.get("index_wasted_bytes")) or 0.0, table,
                                schema)
    return list(items.values()), sorted(set(hidden))


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    items, hidden = _items(conn.query("check_bloat"), scope)
    got = worst_item(node, items, scope, metric="wasted_bytes", what="relation",
                     show="{:.0f} bytes wasted (estimate)")
    if not hidden:
        return got
    unseen = Finding(Status.UNKNOWN, node.name, "insufficient-privilege", (
        f"{len(hidden)} table(s) not estimated: the role may not SELECT them, so pg_stats "
        f"hides their column widths ({', '.join(hidden[:5])}"
        f"{', ...' if len(hidden) > 5 else ''}): GRANT pg_read_all_data (PostgreSQL 14+) "
        "or SELECT on them to the monitoring role"))
    if isinstance(got, Measured):
        return Measured(got.value, got.text, got.evidence, got.extra, (*got.findings, unseen))
    return NodeOutcome(node.name, (unseen,), note=unseen.detail)


CHECK = HealthCheck(
    name="bloat",
    summary="Wasted space of the most bloated table or index, estimated: -w 1GB "
            "(PostgreSQL).",
    measures="estimated wasted bytes of each table and index (check_postgres' estimate; "
             "the largest is judged)",
    kinds=frozenset({"postgres"}), metric="wasted_bytes",
    scoped=_read, filters="relation",
    defaults=Thresholds.above(GB, 5 * GB), unit="bytes", finding="bloat")
