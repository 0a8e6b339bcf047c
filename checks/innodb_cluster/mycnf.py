"""Pure parser for MySQL option files (my.cnf), read the way mysqld reads them.

Follows mysys `my_load_defaults`: `[group]` headers (case-insensitive), `#`/`;` comment
lines, `#` comments after a value unless quoted, quotes around values stripped, escape
sequences (\\n \\t \\s \\\\ ...), `!include FILE` and `!includedir DIR` (only `*.cnf`),
an option before any group is a fatal error. Option names treat `-` and `_` alike;
`loose-` makes an unknown option a warning instead of a startup failure; `skip-`,
`disable-` and `enable-` turn booleans off or on.

`parse_mycnf` reads one file's text; `flatten_mycnf` expands includes through a
resolver callback (`run.load_cnf` supplies one that reads files), so everything here is
free of I/O and never raises on bad input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from toolkit.db.version import Version

MAX_INCLUDE_DEPTH = 10
MYSQLD_GROUPS = ("mysqld", "server")


@dataclass(frozen=True)
class CnfProblem:
    message: str
    source: str
    line: int
    fatal: bool = True
    unreadable: bool = False  # dbgauge cannot validate past it (an include loop)


@dataclass(frozen=True)
class CnfGroup:
    name: str  # lower-cased
    source: str
    line: int


@dataclass(frozen=True)
class CnfOption:
    """One `name[=value]` line; `name` is canonical (lower case, '_' for '-', no loose_)."""

    raw: str  # the name as written
    name: str
    value: str | None  # None: no '=' (a bare boolean switch)
    source: str
    line: int
    group: str | None = None  # filled in by flatten_mycnf
    loose: bool = False
    order: int = 0  # position across all files, filled in by flatten_mycnf


@dataclass(frozen=True)
class CnfDirective:
    kind: str  # "include" or "includedir"
    path: str
    source: str
    line: int


CnfItem = CnfGroup | CnfOption | CnfDirective | CnfProblem


@dataclass(frozen=True)
class ParsedCnf:
    source: str
    items: tuple[CnfItem, ...]


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "r": "\r", "\\": "\\", "s": " ", '"': '"',
            "'": "'"}
_PREFIXES = ("skip", "disable", "enable")


def canonical(name: str) -> tuple[str, bool]:
    """(canonical name, loose) of an option name as written: lower case, '_' for '-'."""
    n = name.strip().lower().replace("-", "_")
    if n.startswith("loose_"):
        return n[len("loose_"):], True
    return n, False


def split_prefix(name: str) -> tuple[str | None, str]:
    """('skip', 'log_bin') for skip_log_bin; (None, name) without a boolean prefix."""
    for p in _PREFIXES:
        if name.startswith(p + "_") and len(name) > len(p) + 1:
            return p, name[len(p) + 1:]
    return None, name


def _remove_end_comment(text: str) -> str:
    quote = ""
    escape = False
    for i, ch in enumerate(text):
        if ch in "'\"" and not escape:
            if not quote:
                quote = ch
            elif quote == ch:
                quote = ""
        if not quote and ch == "#":
            return text[:i]
        escape = bool(quote) and ch == "\\" and not escape
    return text


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
        value = value[1:-1]
    out, i = [], 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and i + 1 < len(value):
            nxt = value[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_mycnf(text: str, source: str) -> ParsedCnf:
    """Items of one option file in order; groups are assigned later by `flatten_mycnf`."""
    items: list[CnfItem] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(" \t\r\n\v\f")
        if "\x00" in line:
            items.append(CnfProblem("NUL byte in option file", source, lineno))
            continue
        if not line or line[0] in "#;":
            continue
        if line[0] == "!":
            m = re.fullmatch(r"!(include|includedir)\s+(.+)", line)
            if not m:
                items.append(CnfProblem(f"unknown directive {line.split()[0]!r} (expected "
                                        "!include or !includedir)", source, lineno))
            else:
                items.append(CnfDirective(m.group(1), m.group(2).strip(), source, lineno))
            continue
        if line[0] == "[":
            end = line.find("]")
            if end < 0:
                items.append(CnfProblem("group header without ']'", source, lineno))
                continue
            name = line[1:end].strip()
            if not name:
                items.append(CnfProblem("empty group name", source, lineno))
                continue
            rest = _remove_end_comment(line[end + 1:]).strip()
            if rest:
                items.append(CnfProblem(f"text after group header: {rest!r}", source, lineno,
                                        fatal=False))
            items.append(CnfGroup(name.lower(), source, lineno))
            continue
        body = _remove_end_comment(line).strip()
        if not body:
            continue
        if "=" in body:
            raw_name, _, value = body.partition("=")
            raw_name, value = raw_name.strip(), _unquote(value.strip())
        else:
            raw_name, value = body, None
        if not raw_name or not re.fullmatch(r"[A-Za-z0-9_\-.]+", raw_name):
            items.append(CnfProblem(f"invalid option name {raw_name!r}", source, lineno))
            continue
        name, loose = canonical(raw_name)
        items.append(CnfOption(raw_name, name, value, source, lineno, loose=loose))
    return ParsedCnf(source, tuple(items))


Resolver = Callable[[CnfDirective], "Sequence[tuple[str, str]] | str"]
"""!include/!includedir -> [(text, source), ...] (includedir: *.cnf in order), or an
error message."""


@dataclass(frozen=True)
class CnfFile:
    """One member's option files, flattened: every option with its group."""

    main: str
    options: tuple[CnfOption, ...]
    groups: tuple[CnfGroup, ...]
    problems: tuple[CnfProblem, ...]
    directives: tuple[CnfDirective, ...]
    sources: tuple[str, ...]
    markers: tuple[tuple[str, str, int], ...] = ()  # (marker, source, line)


_MARKER = re.compile(r"^\s*[#;]\s*dbgauge:\s*(?P<marker>[a-z-]+)\s*$", re.MULTILINE)


def markers_in(text: str, source: str) -> list[tuple[str, str, int]]:
    """`# dbgauge: read-replica` comments that tell the validator a file's role."""
    return [(m.group("marker"), source, text.count("\n", 0, m.start()) + 1)
            for m in _MARKER.finditer(text)]


def flatten_mycnf(text: str, source: str, resolve: Resolver,
                  parse: Callable[[str, str], ParsedCnf] = parse_mycnf) -> CnfFile:
    """Expand !include/!includedir in place. An included file starts with no group."""
    options: list[CnfOption] = []
    groups: list[CnfGroup] = []
    problems: list[CnfProblem] = []
    directives: list[CnfDirective] = []
    sources: list[str] = [source]
    markers = markers_in(text, source)

    def walk(doc: ParsedCnf, depth: int, stack: tuple[str, ...]) -> None:
        group: str | None = None
        for item in doc.items:
            if isinstance(item, CnfGroup):
                group = item.name
                groups.append(item)
            elif isinstance(item, CnfOption):
                if group is None:
                    problems.append(CnfProblem(f"option {item.raw!r} before any [group]: "
                                               "mysqld refuses to start ('Found option "
                                               "without preceding group')", item.source,
                                               item.line))
                    continue
                options.append(replace(item, group=group, order=len(options)))
            elif isinstance(item, CnfProblem):
                problems.append(item)
            else:
                directives.append(item)
                if depth >= MAX_INCLUDE_DEPTH:
                    problems.append(CnfProblem("includes nested too deeply", item.source,
                                               item.line))
                    continue
                got = resolve(item)
                if isinstance(got, str):
                    problems.append(CnfProblem(f"!{item.kind} {item.path}: {got}",
                                               item.source, item.line, fatal=False))
                    continue
                for sub_text, sub_source in got:
                    if sub_source in stack:
                        problems.append(CnfProblem(f"!{item.kind} {item.path}: {sub_source} "
                                                   "is already being read (include loop)",
                                                   item.source, item.line, unreadable=True))
                        continue
                    sources.append(sub_source)
                    markers.extend(markers_in(sub_text, sub_source))
                    walk(parse(sub_text, sub_source), depth + 1, (*stack, sub_source))

    walk(parse(text, source), 0, (source,))
    return CnfFile(source, tuple(options), tuple(groups), tuple(problems),
                   tuple(directives), tuple(sources), tuple(markers))


def server_groups(version: Version) -> tuple[str, ...]:
    """Groups mysqld of this version reads: [mysqld], [server], [mysqld-8.0] ..."""
    return (*MYSQLD_GROUPS, f"mysqld-{version[0]}.{version[1]}")


def effective(options: Iterable[CnfOption], version: Version) -> dict[str, CnfOption]:
    """Last occurrence of each option in the groups mysqld reads (later files win)."""
    wanted = set(server_groups(version))
    out: dict[str, CnfOption] = {}
    for opt in options:
        if opt.group in wanted and not opt.name.startswith("maximum_"):
            out[opt.name] = opt
    return out


def lookup(eff: dict[str, CnfOption], name: str) -> CnfOption | None:
    """The option that decides `name`: itself or skip_/disable_/enable_name, last wins."""
    found = [o for o in (eff.get(name), eff.get("skip_" + name), eff.get("disable_" + name),
                         eff.get("enable_" + name)) if o is not None]
    return max(found, key=lambda o: o.order) if found else None


_TRUE = ("on", "true", "1")
_FALSE = ("off", "false", "0")


def as_bool(opt: CnfOption) -> bool | None:
    """The boolean an option sets (skip_/disable_/enable_ applied), None if not a boolean."""
    prefix, _ = split_prefix(opt.name)
    value = "1" if opt.value is None else opt.value.strip().lower()
    if value in _TRUE:
        result = True
    elif value in _FALSE:
        result = False
    else:
        return None
    return (not result) if prefix in ("skip", "disable") else result


_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50, "e": 1 << 60}


def as_int(text: str | None) -> int | None:
    """mysqld numbers: decimal with an optional K/M/G/T/P/E suffix (powers of 1024)."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(-?\d+)\s*([kKmMgGtTpPeE]?)\s*", text)
    if not m:
        return None
    return int(m.group(1)) * _UNITS.get(m.group(2).lower(), 1)
