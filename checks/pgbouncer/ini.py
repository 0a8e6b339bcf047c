"""Pure parser of pgbouncer.ini and its `%include`s, as libusual's `parse_ini_file` reads them.

It follows PgBouncer's reader rather than Python's configparser, because the differences
are exactly what bites operators: a comment is only a comment at the start of a line, `;`
later in a line is part of the value, and keys are case-sensitive. `parse_pgbouncer_ini`
reads one file; `flatten` expands includes in place through a `Resolver` the caller gives
(the I/O stays with the caller). Nothing here raises on bad input: garbage becomes
located `Problem`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from dbgauge.checks.pgbouncer.tokens import Problem, read_quoted
from dbgauge.toolkit.files import IncludeBudget

_KEY_CHARS = re.compile(r"[A-Za-z0-9_.\-*]+")
_INCLUDE = re.compile(r"%include[ \t]+(?P<path>.*?)\s*$")
MAX_INCLUDE_DEPTH = 10  # libusual refuses deeper nesting


@dataclass(frozen=True)
class Section:
    name: str
    source: str
    line: int


@dataclass(frozen=True)
class Entry:
    """`key = value`; `section` is filled in by `flatten` (includes inherit the section)."""

    key: str
    value: str
    source: str
    line: int
    section: str | None = None
    header: int = 0  # which section header (1st, 2nd, ...) it follows; set by `flatten`


@dataclass(frozen=True)
class Include:
    path: str
    source: str
    line: int


Item = Section | Entry | Include | Problem


@dataclass(frozen=True)
class ParsedIni:
    source: str
    items: tuple[Item, ...]


def parse_pgbouncer_ini(text: str, source: str, *, echo: bool = True) -> ParsedIni:
    """Parse one pgbouncer.ini file as libusual does, line by line, keeping order.

    `echo` off (an included file, which may be any file at all): problems name the line
    and what was expected, never the text found there."""
    items: list[Item] = []
    nul = text.find("\x00")
    if nul >= 0:
        items_line = text.count("\n", 0, nul) + 1
        text = text[:nul]
        nul_problem = Problem("NUL byte: PgBouncer stops reading the file here", source,
                              items_line)
    else:
        nul_problem = None
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.lstrip(" \t\n\r\v\f")
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            end = line.find("]")
            if end < 0:
                items.append(Problem("syntax error: section header without ']'", source, lineno))
                continue
            items.append(Section(line[1:end], source, lineno))
            rest = line[end + 1:].strip()
            if rest and rest[0] not in "#;":
                items.append(Problem("syntax error: text after section header"
                                     + (f": {rest!r}" if echo else ""), source, lineno))
            continue
        if line[0] == "%":
            m = _INCLUDE.match(line)
            if m and m.group("path"):
                items.append(Include(m.group("path"), source, lineno))
            else:
                items.append(Problem("syntax error: unknown directive"
                                     + (f" {line.split()[0]!r}" if echo else "")
                                     + " (only '%include FILE' exists)", source, lineno))
            continue
        key, pos, err = _read_key(line)
        if err:
            items.append(Problem(err if echo else "syntax error: expected a key", source,
                                 lineno))
            continue
        while pos < len(line) and line[pos] in " \t":
            pos += 1
        if pos >= len(line) or line[pos] != "=":
            items.append(Problem("syntax error: expected '=' after "
                                 + (repr(key) if echo else "the key"), source, lineno))
            continue
        value = line[pos + 1:].lstrip(" \t").rstrip(" \t\n\r\v\f")
        items.append(Entry(key, value, source, lineno))
    if nul_problem:
        items.append(nul_problem)
    return ParsedIni(source, tuple(items))


def _read_key(line: str) -> tuple[str, int, str | None]:
    if line[0] == '"':  # quoted database name, "" stands for one quote
        key, end = read_quoted(line, 0)
        if key is None:
            return "", 0, "syntax error: unterminated double quote in key"
        return key, end, None
    m = _KEY_CHARS.match(line)
    if not m:
        return "", 0, f"syntax error: {line[0]!r} cannot start a key"
    return m.group(0), m.end(), None


Resolver = Callable[[Include], "tuple[str, str] | str"]
"""%include (path, including source, line) -> (text, resolved source), or an error message."""


@dataclass(frozen=True)
class Flattened:
    """All files of one configuration, includes expanded in place, sections assigned."""

    entries: tuple[Entry, ...]
    sections: tuple[Section, ...]
    problems: tuple[Problem, ...]
    sources: tuple[str, ...]
    includes: tuple[Include, ...] = ()


def flatten(parsed: ParsedIni, resolve: Resolver) -> Flattened:
    """Expand `%include` where it appears; an included file continues the current section.
    What the includes expand to is bounded (toolkit.files.IncludeBudget: ConfigError)."""
    entries: list[Entry] = []
    sections: list[Section] = []
    problems: list[Problem] = []
    sources: list[str] = [parsed.source]
    includes: list[Include] = []
    current: list[str | None] = [None]
    headers = [0]
    budget = IncludeBudget()

    def walk(doc: ParsedIni, depth: int, stack: tuple[str, ...]) -> None:
        for item in doc.items:
            if isinstance(item, Section):
                current[0] = item.name
                headers[0] += 1
                sections.append(item)
            elif isinstance(item, Entry):
                if current[0] is None:
                    shown = repr(item.key) if depth == 0 else "a setting"  # include: any file
                    problems.append(Problem(f"{shown} is set before any [section]",
                                            item.source, item.line))
                entries.append(replace(item, section=current[0], header=headers[0]))
            elif isinstance(item, Problem):
                problems.append(item)
            else:
                includes.append(item)
                if depth >= MAX_INCLUDE_DEPTH:
                    problems.append(Problem(f"%include nested deeper than {MAX_INCLUDE_DEPTH}",
                                            item.source, item.line))
                    continue
                got = resolve(item)
                if isinstance(got, str):
                    problems.append(Problem(f"%include {item.path}: {got}", item.source,
                                            item.line))
                    continue
                text, resolved = got
                if resolved in stack:
                    problems.append(Problem(f"%include {item.path}: {resolved} is already being "
                                            "read (include loop)", item.source, item.line,
                                            unreadable=True))
                    continue
                budget.take(text, item.source, item.line)
                sources.append(resolved)
                walk(parse_pgbouncer_ini(text, resolved, echo=False), depth + 1,
                     (*stack, resolved))

    walk(parsed, 0, (parsed.source,))
    return Flattened(tuple(entries), tuple(sections), tuple(problems), tuple(sources),
                     tuple(includes))
