"""What a check over objects (databases, relations, settings) is narrowed to, as
check_postgres' options say it, and how one value per object becomes one judged value
with one perfdata item per object.

`--include` / `--exclude` follow check_postgres' `skip_item` exactly, so a command line
moved from check_postgres checks the same objects: each may be given several times and as
comma-separated lists; `~word` is a regular expression (searched, not anchored), a word
ending in `.` names a schema; exclusion is applied first and inclusion brings back what it
matches. With only --include, only what it matches is checked; with both, an object that
neither matches is kept (check_postgres' rule, kept as is). Pure: no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import Measured, NodeOutcome, cannot_tell
from dbgauge.toolkit.errors import ConfigError

if TYPE_CHECKING:
    from dbgauge.toolkit.targets import Selection, Target


@dataclass(frozen=True)
class Scope:
    """The user's narrowing of one check run: object filters and a custom query."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    query: str = ""  # custom-query's statement

    def __post_init__(self) -> None:
        for word in _words(self.include) + _words(self.exclude):
            if word.startswith("~"):
                try:
                    re.compile(word[1:].removesuffix("."))
                except re.error as exc:
                    raise ConfigError(f"--include/--exclude {word!r}: not a regular "
                                      f"expression: {exc}") from None

    @property
    def filtered(self) -> bool:
        return bool(self.include or self.exclude)

    def skips(self, name: str, schema: str = "") -> bool:
        """Whether check_postgres' `skip_item(name, schema)` would skip this object."""
        stat = 0
        if self.exclude:
            stat = 1 + (2 if _matches(_words(self.exclude), name, schema) else 0)
        if self.include:
            stat += 4 + (8 if _matches(_words(self.include), name, schema) else 0)
        return stat in (3, 4, 7)


def _words(given: Iterable[str]) -> list[str]:
    return [w for item in given for w in re.split(r"\s*,\s*", item) if w]


def _matches(words: Sequence[str], name: str, schema: str) -> bool:
    for word in words:
        target = name
        if word.endswith("."):
            word, target = word[:-1], schema
        if word.startswith("~"):
            if re.search(word[1:], target):
                return True
        elif word == target:
            return True
    return False


@dataclass(frozen=True)
class Item:
    """One object's value: `label` names it in perfdata (as check_postgres names it),
    `name`/`schema` are what --include/--exclude match."""

    label: str
    value: float
    name: str = ""
    schema: str = ""

    @property
    def match_name(self) -> str:
        return self.name or self.label


def kept(items: Iterable[Item], scope: Scope) -> list[Item]:
    return [i for i in items if not scope.skips(i.match_name, i.schema)]


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
        why = (f"no {what} matched --include/--exclude ({len(items)} {what} in all)"
               if scope.filtered else f"no {what} to judge")
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

    names = [d for given in dbnames for d in re.split(r"\s*,\s*", given) if d]
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
