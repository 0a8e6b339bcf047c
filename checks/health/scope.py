"""How one value per object (database, relation) becomes one judged value with one
perfdata item per object, narrowed by the user's `Scope` (`filters`), and --dbname's
nodes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope, words
from dbgauge.checks.health.model import Measured, NodeOutcome, cannot_tell
from dbgauge.toolkit.errors import ConfigError

__all__ = ["Item", "Scope", "kept", "per_database", "worst_item"]

if TYPE_CHECKING:
    from dbgauge.toolkit.targets import Selection, Target


@dataclass(frozen=True)
class Item:
    """One object's value: `label` names it in perfdata (as check_postgres names it),
    `name`/`schema` are what --include/--exclude match."""

    label: str
    value: float
    name: str = ""
    schema: str = ""
    owner: str = ""  # what --includeuser/--excludeuser match (a database's, a relation's)

    @property
    def match_name(self) -> str:
        return self.name or self.label


def kept(items: Iterable[Item], scope: Scope) -> list[Item]:
    return [i for i in items if not scope.skips(i.match_name, i.schema)
            and not scope.skips_user(i.owner)]


def worst_item(node: Target, items: Sequence[Item], scope: Scope, *, metric: str,
               what: str, higher_is_worse: bool = True, show: str = "{:.0f}",
               nothing: str = "") -> Measured | NodeOutcome:
    """The worst object's value, judged; every object's value as perfdata
    (`node:OBJECT:metric`). Nothing left to judge is UNKNOWN (check_postgres: "No
    matching ..."), unless `nothing` says why that is fine (then OK with that note)."""
    chosen = kept(items, scope)
    if not chosen:
        if nothing and not items:
            return NodeOutcome(node.name, note=nothing)
        why = (f"no {what} matched {scope.given} ({len(items)} {what} in all)"
               if scope.given else f"no {what} to judge")
        return cannot_tell(node, f"no-matching-{what.replace(' ', '-')}", why)
    ordered = sorted(chosen, key=lambda i: (-i.value if higher_is_worse else i.value,
                                            i.label))
    top = ordered[0]
    text = f"{what} {top.label}: {show.format(top.value)}" + (
        f" (worst of {len(chosen)})" if len(chosen) > 1 else "")
    extra = [(f"{i.label}:{metric}", i.value) for i in sorted(chosen, key=lambda i: i.label)]
    return Measured(top.value, text, {"object": top.label}, extra)


def per_database(nodes: Selection, dbnames: Sequence[str]) -> Selection:
    """Each PostgreSQL node once per database named (check_postgres' `--dbname a,b`, for
    the checks whose objects live in one database: tables, sequences, triggers), named
    `NODE/DATABASE`; other nodes as they are. ConfigError for a DSN that cannot take one."""
    from dbgauge.toolkit.db.conninfo import merge_conninfo
    from dbgauge.toolkit.targets import Selection

    names = words(dbnames)
    if not names:
        return nodes
    out: list[Target] = []
    named: set[str] = set()
    for t in nodes.targets:
        if t.kind != "postgres":
            out.append(t)
            named.update({t.name} & nodes.named)
            continue
        for db in names:
            try:
                dsn = merge_conninfo(t.dsn, dbname=db)
            except ValueError as exc:
                raise ConfigError(f"--dbname {db}: node {t.name}: {exc}") from None
            out.append(replace(t, name=f"{t.name}/{db}", dsn=dsn))
            if t.name in nodes.named:
                named.add(f"{t.name}/{db}")
    return Selection(tuple(out), frozenset(named))
