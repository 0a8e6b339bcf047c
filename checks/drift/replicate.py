"""The replicate table of the replicated method: dbgauge's own `dbgauge.checksums`, or the
table `--replicate DB.TBL` names in pt-table-checksum's layout, so pt's queries
(`--replicate-check-only`, the documented "which tables differ" query) and dashboards
built on `percona.checksums` keep working.

The two layouts differ only in what the source's own values are called: `source_cnt`,
`source_crc` in dbgauge's, `master_cnt`, `master_crc` in pt's. The table's columns tell
which one an existing table has; a missing table named by --replicate is created in pt's
layout, and a table of any other shape is refused (dbgauge writes only to tables it owns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbgauge.checks.drift.model import DriftError
from dbgauge.checks.drift.sides import Side
from dbgauge.checks.drift.sql import Statement, compose
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.sql import load_sql, quote_ident

DEFAULT = ("dbgauge", "checksums")
_COMMON = {"db", "tbl", "chunk", "chunk_time", "chunk_index", "lower_boundary",
           "upper_boundary", "this_crc", "this_cnt", "ts"}
_LAYOUTS = {"master": _COMMON | {"master_crc", "master_cnt"},
            "source": _COMMON | {"source_crc", "source_cnt"}}


def parse_replicate(name: str | None) -> tuple[str, str]:
    """--replicate DB.TBL as (db, tbl); None is dbgauge.checksums."""
    if name is None:
        return DEFAULT
    db, dot, tbl = name.partition(".")
    if not dot or not db or not tbl or "." in tbl:
        raise ConfigError(f"--replicate {name!r}: write the table as DB.TBL, e.g. "
                          "percona.checksums")
    try:
        quote_ident(db, "mysql")
        quote_ident(tbl, "mysql")
    except DbgaugeError as exc:
        raise ConfigError(f"--replicate {name!r}: {exc}") from None
    return db, tbl


@dataclass(frozen=True)
class ReplicateTable:
    """Where chunk results go, and what the source's columns are called there."""

    schema: str
    table: str
    prefix: str = "source"  # "source" (dbgauge.checksums) or "master" (pt's layout)

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.table}"

    def parts(self) -> dict[str, str]:
        # dbgauge's own table keeps the plain name its statements always had in the binlog
        name = ("dbgauge.checksums" if (self.schema, self.table) == DEFAULT else
                f"{quote_ident(self.schema, 'mysql')}.{quote_ident(self.table, 'mysql')}")
        return {"replicate": name, "source_cnt": f"{self.prefix}_cnt",
                "source_crc": f"{self.prefix}_crc"}

    def statement(self, side: Side, name: str, params: tuple[Any, ...] = ()) -> Statement:
        return compose(side.flavor, side.version, name, self.parts()), params

    def run(self, side: Side, name: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return side.run(self.statement(side, name, params))


def layout(side: Side, schema: str, table: str) -> str | None:
    """"source" or "master" by the table's columns on `side`; None if it does not exist.
    Raises when it exists with another shape."""
    cols = {_text(r["name"]).lower()
            for r in side.q("checksum_replicate_columns", (schema, table))}
    if not cols:
        return None
    for prefix, needed in _LAYOUTS.items():
        if needed <= cols:
            return prefix
    missing = sorted(_LAYOUTS["master"] - cols)
    raise DriftError(f"{schema}.{table} on {side.role} {side.name} is not a checksum table "
                     f"(it lacks {', '.join(missing)}): name a new table or one in "
                     "pt-table-checksum's --replicate layout")


def prepare(source: Side, replicate: str | None) -> ReplicateTable:
    """The replicate table on the source, created if missing (replicated to replicas)."""
    schema, table = parse_replicate(replicate)
    found = layout(source, schema, table)
    if found is None:
        if (schema, table) == DEFAULT:
            script, prefix = load_sql("schema", "mysql_checksums"), "source"
        else:
            script, prefix = load_sql("schema", "mysql_pt_checksums"), "master"
        target = ReplicateTable(schema, table, prefix)
        script = (script.replace("{database}", quote_ident(schema, "mysql"))
                  .replace("{replicate}", target.parts()["replicate"]))
        for statement in script.split(";"):
            if statement.strip():
                source.run((statement.strip(), ()))
        return target
    return ReplicateTable(schema, table, found)


def on_replica(replica: Side, replicate: str | None) -> ReplicateTable:
    """The replicate table as `replica` holds it (for --replicate-check-only)."""
    schema, table = parse_replicate(replicate)
    found = layout(replica, schema, table)
    if found is None:
        raise DriftError(f"replica {replica.name} has no table {schema}.{table} (or the "
                         "checking user cannot see it): run a replicated checksum with "
                         f"--replicate {schema}.{table} first, or name the table it wrote")
    return ReplicateTable(schema, table, found)
