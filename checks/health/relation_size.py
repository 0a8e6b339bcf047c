"""check relation-size / table-size / index-size / indexes-size / total-relation-size:
the largest relation of the connected database by check_postgres' measure of the same
name, in bytes, one perfdata item per relation.

As check_postgres: relation-size is pg_relation_size of tables, TOAST tables, indexes
and materialized views; index-size the same of indexes; table-size pg_table_size (with
TOAST and forks) of tables and materialized views; indexes-size pg_indexes_size (their
indexes together) of tables, TOAST tables and materialized views; total-relation-size
pg_total_relation_size of tables and materialized views. A table is named
`schema.table` in perfdata, any other relation by its name (check_postgres' labels).
`--include`/`--exclude` match the relation's name, `schema.` its schema. Thresholds are
sizes with no default (give -w or -c). Catalogs count, as in check_postgres (exclude
them with `--exclude pg_catalog.`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Item, Scope, worst_item
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)  # no default: alerts only when the user gives a level

# check name -> (column of check_relation_sizes, relation kinds, what it measures)
MEASURES = {
    "relation-size": ("relation_size", "rtim", "pg_relation_size of each relation"),
    "index-size": ("relation_size", "i", "pg_relation_size of each index"),
    "table-size": ("table_size", "rm", "pg_table_size of each table (with TOAST)"),
    "indexes-size": ("indexes_size", "rtm", "pg_indexes_size of each table"),
    "total-relation-size": ("total_relation_size", "rm",
                            "pg_total_relation_size of each table (with indexes, TOAST)"),
}


def _read(name: str, node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    column, kinds, _ = MEASURES[name]
    items = []
    for r in conn.query("check_relation_sizes"):
        kind, size = text(r.get("relkind")), number(r.get(column))
        if kind not in kinds or size is None:
            continue
        schema, rel = text(r.get("schemaname")), text(r.get("relname"))
        items.append(Item(f"{schema}.{rel}" if kind == "r" else rel, size, rel, schema,
                          text(r.get("owner"))))
    return worst_item(node, items, scope, metric="size_bytes", what="relation",
                      show="{:.0f} bytes")


def _check(name: str) -> HealthCheck:
    measures = MEASURES[name][2]
    return HealthCheck(
        name=name,
        summary=f"The largest {measures}: bytes or with a unit, -w 10GB (PostgreSQL).",
        measures=measures + " (the largest is judged)",
        kinds=frozenset({"postgres"}), metric="size_bytes",
        scoped=lambda node, conn, scope: _read(name, node, conn, scope),
        filters="relation", user_filters="relation owner",
        defaults=Thresholds(NEVER, NEVER), unit="bytes",
        finding=name, needs_thresholds=True)


RELATION = _check("relation-size")
INDEX = _check("index-size")
TABLE = _check("table-size")
INDEXES = _check("indexes-size")
TOTAL = _check("total-relation-size")
