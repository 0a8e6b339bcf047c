"""What `check same-schema` compares, without a server: a database's schema as a set of
objects (kind, name, detail) made from what pgtap generate reads of the catalog
(`toolkit.pgtap.generate.Snapshot`) and the few things it does not read
(sql/postgres/same_schema_extras.sql), check_postgres' `--filter` rules, and the
differences between two such sets, one message each."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dbgauge.toolkit.errors import ConfigError

if TYPE_CHECKING:  # listing the checks must not load the drivers pgtap generate imports
    from dbgauge.toolkit.pgtap.generate import Snapshot

Objects = Mapping[tuple[str, str], str]  # (kind, name) -> what must be equal
_RELKINDS = {"r": "table", "p": "table", "v": "view", "m": "view", "S": "sequence"}
# check_postgres' --filter kinds, and dbgauge's kinds each one covers
FILTER_KINDS = {
    "schema": ("schema",), "table": ("table", "column"), "view": ("view",),
    "index": ("index",), "sequence": ("sequence",), "constraint": ("constraint",),
    "trigger": ("trigger",), "function": ("function",),
    "extension": ("extension",), "column": ("column",)}
_IGNORED = ("user", "perm", "position")  # check_postgres compares them, dbgauge does not


@dataclass(frozen=True)
class SchemaFilter:
    """check_postgres' --filter: `noKIND` leaves a kind out, `noKIND=REGEX` the objects of
    a kind whose name it matches, `nofuncbody` function bodies (`nouser`, `noperm`,
    `noposition` are taken and change nothing: dbgauge compares none of them)."""

    kinds: frozenset[str] = frozenset()
    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    bodies: bool = True  # compare function bodies (not with nofuncbody)

    def keeps(self, kind: str, name: str) -> bool:
        if kind in self.kinds:
            return False
        bare = name.split("(", 1)[0].rsplit(".", 1)[-1]  # the object's own name
        return not any(k == kind and (p.search(name) or p.search(bare))
                       for k, p in self.patterns)


def _singular(word: str) -> str:
    """A kind written as check_postgres' docs write it: `indexes`, `tables`, `index`."""
    for cut in (0, 1, 2):
        if cut <= len(word) and (found := word[:len(word) - cut]) in FILTER_KINDS:
            return found
    return word


def parse_filter(given: str) -> SchemaFilter:
    """`notrigger=slony noindexes nofuncbody` (spaces or commas); ConfigError otherwise."""
    kinds: set[str] = set()
    patterns: list[tuple[str, re.Pattern[str]]] = []
    bodies = True
    for phrase in (p for p in re.split(r"[\s,]+", given) if p):
        head, eq, regex = phrase.partition("=")
        m = re.fullmatch(r"no(\w+)", head.lower())
        word = _singular(m.group(1)) if m else ""
        if word in ("funcbody", *_IGNORED) and not eq:
            bodies = bodies and word != "funcbody"
            continue
        if word not in FILTER_KINDS:
            raise ConfigError(f"--filter {phrase!r}: give noKIND or noKIND=REGEX, KIND one of "
                              f"{', '.join(FILTER_KINDS)} (or nofuncbody)")
        if not eq:
            kinds.update(FILTER_KINDS[word])
            continue
        try:
            rx = re.compile(regex)
        except re.error as exc:
            raise ConfigError(f"--filter {phrase!r}: not a regular expression: {exc}") from None
        patterns += [(k, rx) for k in FILTER_KINDS[word]]
    return SchemaFilter(frozenset(kinds), tuple(patterns), bodies)


def objects(snap: Snapshot, extras: Iterable[tuple[str, str, str]], *, bodies: bool = True
            ) -> dict[tuple[str, str], str]:
    """A database's schema as (kind, name) -> detail (extension members left out: their
    extension and its version stand for them); `bodies`: a function's detail includes a
    digest of its body (check_postgres' nofuncbody leaves it out)."""
    out: dict[tuple[str, str], str] = {("schema", s): "" for s in snap.schemas}
    members = {(r.schema, r.name) for r in snap.relations if r.extension}
    for r in snap.relations:
        if not r.extension:
            kind = _RELKINDS.get(r.kind, r.kind)
            out[(kind, f"{r.schema}.{r.name}")] = (r.definition or "") if kind == "view" else (
                "partitioned" if r.kind == "p" else "")
    for c in snap.columns:
        if (c.schema, c.table) not in members:
            out[("column", f"{c.schema}.{c.table}.{c.name}")] = " ".join(filter(None, (
                c.type, "NOT NULL" if c.not_null else "",
                f"DEFAULT {c.default_expr}" if c.has_default else "",
                "GENERATED" if c.generated else "")))
    for i in snap.indexes:
        if (i.schema, i.table) not in members:
            out[("index", f"{i.schema}.{i.name}")] = i.definition
    for f in snap.functions:
        if not f.extension:
            out[("function", f"{f.schema}.{f.signature}")] = f"returns {f.returns}"
    for t in snap.triggers:
        out[("trigger", f"{t.schema}.{t.table}.{t.name}")] = (
            f"executes {t.function_schema}.{t.function_name}")
    for kind, name, detail in extras:
        if kind == "function body":
            if bodies and ("function", name) in out:
                out[("function", name)] += f", body md5 {detail}"
        elif kind == "trigger definition":
            if ("trigger", name) in out:
                out[("trigger", name)] = detail
        else:
            out[(kind, name)] = detail
    return out


def differences(reference: str, ref: Objects, name: str, other: Objects,
                keep: SchemaFilter = SchemaFilter()) -> list[str]:
    """One message per difference, in kind and name order."""
    out = []
    for key in sorted(set(ref) | set(other)):
        kind, obj = key
        if not keep.keeps(kind, obj):
            continue
        if key not in other:
            out.append(f"{kind} {obj} is missing on {name} (on {reference})")
        elif key not in ref:
            out.append(f"{kind} {obj} is on {name} only (not on {reference})")
        elif ref[key] != other[key]:
            out.append(f"{kind} {obj} differs: {_short(ref[key])} on {reference}, "
                       f"{_short(other[key])} on {name}")
    return out


def _short(detail: str, most: int = 120) -> str:
    flat = " ".join(detail.split()) or "(nothing)"
    return repr(flat if len(flat) <= most else flat[:most - 3] + "...")


def counted(messages: Sequence[str]) -> dict[str, int]:
    """How many differences of each kind (the word before the object's name)."""
    out: dict[str, int] = {}
    for m in messages:
        kind = m.split(" ", 1)[0]
        out[kind] = out.get(kind, 0) + 1
    return out
