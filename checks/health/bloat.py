"""check bloat: the wasted space of each table and index in the connected database, by
check_postgres' bloat estimate (relpages against what reltuples of rows of pg_stats'
average width should fill), one perfdata item per table (`schema.table`) and index (its
name) as check_postgres labels them. Tables and indexes are judged each on its own, as
there.

Thresholds are check_postgres' (`validate_size_or_percent_with_oper`): a size of wasted
bytes (`-w '100 M'`, `1GB`; bare: bytes), a bloat percentage (`-c 150%`: the relation's
pages against the pages its rows should fill, x100, to one decimal of the ratio -- a
relation exactly as large as it should be reads 0%, as there), or both joined by `and`
(`&&`) or `or` (`||`): `'1 G and 150%'`. A level alerts at or above it, as there. No -w
and no -c: 1 GB and 5 GB; one given alone, the other is none (check_postgres' rule).

An estimate, as check_postgres says: it trusts the last ANALYZE, and is rough for
indexes. Differences: check_postgres' small-relation cut-off (indexes under 10 wasted
pages) and its top-10 limit, both applied only without --include/--exclude, are not
applied (every relation is judged); and a table the role may not SELECT, whose column
widths pg_stats hides, is not judged (check_postgres estimates it at 2048 bytes a
column: never bloated): the check is UNKNOWN naming the grant (the few superuser-only
catalogs, pg_authid and the like, are left out quietly). `--include`/`--exclude` match
the table name (`schema.` a schema), an index counting with its table, as there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    OwnThresholds,
    Thresholds,
)
from dbgauge.checks.health.scope import Item, kept, worst_item
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import peer_size
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection, Row
    from dbgauge.toolkit.targets import Target

GB = 2.0 ** 30
_JOINED = re.compile(r"^(.+?)\s([&|]{2}|and|or)\s(.+)$", re.IGNORECASE)
_PERCENT = re.compile(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*%\s*$")


@dataclass(frozen=True)
class BloatLevel:
    """One bloat threshold as check_postgres reads it: wasted bytes at least `size`,
    bloat at least `percent`, both of them (`both`) or either; neither set: never."""

    size: float | None = None
    percent: float | None = None
    both: bool = False
    text: str = ""

    def alerts(self, wasted: float, percent: float) -> bool:
        hits = [got >= level for got, level in ((wasted, self.size), (percent, self.percent))
                if level is not None]
        return bool(hits) and (all(hits) if self.both else any(hits))


def _part(text: str, option: str) -> tuple[str, float]:
    m = _PERCENT.match(text)
    if m:
        return "percent", float(m.group(1))
    try:
        return "size", peer_size(text)
    except ValueError as exc:
        raise ConfigError(f"{option} {text!r}: {exc}, or a bloat percentage (150%)") from None


def parse_level(text: str, option: str) -> BloatLevel:
    """`100 M`, `150%`, `1 G and 150%`, `150% or 500 M` ("" never alerts); ConfigError
    for anything else (two sizes joined, as check_postgres would misread them)."""
    text = text.strip()
    if not text:
        return BloatLevel()
    joined = _JOINED.match(text)
    if joined is None:
        kind, value = _part(text, option)
        return BloatLevel(**{kind: value}, text=text)  # type: ignore[arg-type]
    parts = dict((_part(joined.group(1), option), _part(joined.group(3), option)))
    if len(parts) != 2:
        raise ConfigError(f"{option} {text!r}: join a size and a percentage "
                          "('1 G and 150%'), not two of one kind")
    op = joined.group(2).lower()
    return BloatLevel(parts["size"], parts["percent"], op in ("and", "&&"), text)


def levels(scope: Scope) -> tuple[BloatLevel, BloatLevel]:
    """(warning, critical) of the user's -w/-c; neither: check_postgres' 1 GB and 5 GB."""
    if not scope.warning and not scope.critical:
        return BloatLevel(GB, text="1 GB"), BloatLevel(5 * GB, text="5 GB")
    return parse_level(scope.warning, "--warning"), parse_level(scope.critical, "--critical")


def _check_levels(scope: Scope) -> None:
    levels(scope)


def _perf(scope: Scope) -> dict[str, tuple[str | None, str | None]]:
    """Sizes alone as the perfdata warn/crit of wasted_bytes (a percentage or a join has
    no place there)."""
    sizes = [f"{lv.size:.0f}" if lv.size is not None and lv.percent is None else None
             for lv in levels(scope)]
    return {"wasted_bytes": (sizes[0], sizes[1])}


@dataclass(frozen=True)
class _Relation:
    item: Item
    kind: str  # "table" or "index"
    percent: float


def _relations(rows: list[Row], scope: Scope) -> tuple[list[_Relation], list[str]]:
    from dbgauge.toolkit.db.values import flag, number, text

    found: dict[str, _Relation] = {}
    hidden: list[str] = []
    for r in rows:
        schema, table = text(r.get("schemaname")), text(r.get("tablename"))
        if not flag(r.get("readable")):  # a few catalogs are superuser's: left out
            if schema != "pg_catalog" and not scope.skips(table, schema):
                hidden.append(f"{schema}.{table}")
            continue
        name = f"{schema}.{table}"
        found[name] = _Relation(Item(name, number(r.get("wasted_bytes")) or 0.0, table,
                                     schema), "table", number(r.get("bloat_percent")) or 0.0)
        index = text(r.get("iname"))
        if index:  # an index counts with its table's filter (check_postgres' rule)
            found[index] = _Relation(
                Item(index, number(r.get("index_wasted_bytes")) or 0.0, table, schema),
                "index", number(r.get("index_bloat_percent")) or 0.0)
    return list(found.values()), sorted(set(hidden))


def _judged(node: Target, relations: list[_Relation], got: Measured,
            scope: Scope) -> NodeOutcome:
    """Each table and index against the user's levels (check_postgres' forms)."""
    warning, critical = levels(scope)
    chosen = {i.label for i in kept([r.item for r in relations], scope)}
    findings: list[Finding] = []
    for rel in sorted(relations, key=lambda r: (-r.item.value, r.item.label)):
        if rel.item.label not in chosen:
            continue
        status, level = ((Status.CRITICAL, critical) if critical.alerts(rel.item.value,
                                                                         rel.percent)
                         else (Status.WARNING, warning) if warning.alerts(rel.item.value,
                                                                          rel.percent)
                         else (Status.OK, None))
        if level is not None:
            findings.append(Finding(status, node.name, "bloat", (
                f"{rel.kind} {rel.item.label}: {rel.item.value:.0f} bytes wasted, bloat "
                f"{rel.percent:g}% (estimate; threshold {level.text})"),
                {"object": rel.item.label}))
    perf = ((perf_label(node.name, "wasted_bytes"), got.value),
            *((perf_label(node.name, m), v) for m, v in got.extra))
    return NodeOutcome(node.name, tuple(findings), perf, got.text)


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    relations, hidden = _relations(conn.query("check_bloat"), scope)
    got = worst_item(node, [r.item for r in relations], scope, metric="wasted_bytes",
                     what="relation", show="{:.0f} bytes wasted (estimate)")
    if isinstance(got, Measured) and (scope.warning or scope.critical):
        got = _judged(node, relations, got, scope)
    if not hidden:
        return got
    unseen = Finding(Status.UNKNOWN, node.name, "insufficient-privilege", (
        f"{len(hidden)} table(s) not estimated: the role may not SELECT them, so pg_stats "
        f"hides their column widths ({', '.join(hidden[:5])}"
        f"{', ...' if len(hidden) > 5 else ''}): GRANT pg_read_all_data (PostgreSQL 14+) "
        "or SELECT on them to the monitoring role"))
    if isinstance(got, Measured):
        return Measured(got.value, got.text, got.evidence, got.extra, (*got.findings, unseen))
    return NodeOutcome(got.node, (*got.findings, unseen), got.perfdata,
                       got.note or unseen.detail)


CHECK = HealthCheck(
    name="bloat",
    summary="Wasted space of each table and index, estimated: -w '1 G and 150%' "
            "(PostgreSQL).",
    measures="estimated wasted bytes and bloat percentage of each table and index "
             "(check_postgres' estimate and threshold forms)",
    kinds=frozenset({"postgres"}), metric="wasted_bytes",
    scoped=_read, filters="relation",
    defaults=Thresholds.above(GB, 5 * GB), unit="bytes", finding="bloat",
    own_thresholds=OwnThresholds(
        "SIZE|N%|'SIZE and N%'",
        "check_postgres' forms: wasted bytes (100 M, 1GB; bare: bytes), a bloat "
        "percentage (150%: pages against the pages the rows should fill), or both "
        "joined by and/or ('1 G and 150%'); alerts at or above it; default 1 GB and 5 GB",
        _check_levels, perf=_perf))
