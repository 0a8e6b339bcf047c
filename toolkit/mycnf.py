"""MySQL option files (my.cnf), read the way mysqld and the client programs read them:
the one pure parser for `validate innodb-cluster` (server groups), for connections
(the client groups, `toolkit.clientcnf` reads the files) and for mysqld_exporter's
`--config.my-cnf`.

Follows mysys `my_load_defaults`: `[group]` headers (case-insensitive), `#`/`;` comment
lines, `#` comments after a value unless quoted, quotes around values stripped, escape
sequences (\\n \\t \\s \\\\ ...), `!include FILE` and `!includedir DIR` (only `*.cnf`),
an option before any group is a fatal error. Option names treat `-` and `_` alike;
`loose-` makes an unknown option a warning instead of a startup failure; `skip-`,
`disable-` and `enable-` turn booleans off or on.

`parse_mycnf` reads one file's text; `flatten_mycnf` expands includes through a
resolver callback (the callers supply one that reads files), so everything here is
free of I/O and never raises on bad input, except `read_sections`' ConfigError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.files import IncludeBudget
from dbgauge.toolkit.redact import register_secret

MAX_INCLUDE_DEPTH = 10


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


def parse_mycnf(text: str, source: str, *, echo: bool = True) -> ParsedCnf:
    """Items of one option file in order; groups are assigned later by `flatten_mycnf`.

    `echo` off (an included file, which may be any file at all): problems name the line
    and what was expected, never the text found there."""
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
                items.append(CnfProblem("unknown directive"
                                        + (f" {line.split()[0]!r}" if echo else "")
                                        + " (expected !include or !includedir)", source,
                                        lineno))
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
                items.append(CnfProblem("text after group header"
                                        + (f": {rest!r}" if echo else ""), source, lineno,
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
            items.append(CnfProblem("invalid option name" + (f" {raw_name!r}" if echo else
                                                             " (expected letters, digits, "
                                                             "'_', '-', '.')"),
                                    source, lineno))
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


def flatten_mycnf(text: str, source: str, resolve: Resolver) -> CnfFile:
    """Expand !include/!includedir in place. An included file starts with no group.
    What the includes expand to is bounded (toolkit.files.IncludeBudget: ConfigError)."""
    options: list[CnfOption] = []
    groups: list[CnfGroup] = []
    problems: list[CnfProblem] = []
    directives: list[CnfDirective] = []
    sources: list[str] = [source]
    markers = markers_in(text, source)
    budget = IncludeBudget()

    def walk(doc: ParsedCnf, depth: int, stack: tuple[str, ...]) -> None:
        group: str | None = None
        for item in doc.items:
            if isinstance(item, CnfGroup):
                group = item.name
                groups.append(item)
            elif isinstance(item, CnfOption):
                if group is None:
                    shown = f" {item.raw!r}" if depth == 0 else ""  # an include: any file
                    problems.append(CnfProblem(f"option{shown} before any [group]: "
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
                    budget.take(sub_text, item.source, item.line)
                    sources.append(sub_source)
                    markers.extend(markers_in(sub_text, sub_source))
                    walk(parse_mycnf(sub_text, sub_source, echo=False), depth + 1,
                         (*stack, sub_source))

    walk(parse_mycnf(text, source), 0, (source,))
    return CnfFile(source, tuple(options), tuple(groups), tuple(problems),
                   tuple(directives), tuple(sources), tuple(markers))


# The groups every client program reads, in order (a later one wins): [client] (MySQL
# and MariaDB), MariaDB's [client-server] and [client-mariadb], then dbgauge's own.
# Not [mysql]: that is the mysql program's group (PyMySQL's read_default_file reads
# [client] only).
CLIENT_GROUPS = ("client", "client-server", "client-mariadb", "dbgauge")
CLIENT_KEYS = frozenset({"user", "password", "host", "port", "socket", "database", "ssl_ca"})


def client_options(cnf: CnfFile, groups: Iterable[str] = CLIENT_GROUPS) -> dict[str, str]:
    """The connection settings a client takes from flattened option files: the last
    value of each of CLIENT_KEYS in `groups` (the client reads its groups in file
    order, so a later line wins whatever its group). A bare
    `password` (the client prompts) sets nothing."""
    wanted = {g.lower() for g in groups}
    settings: dict[str, str] = {}
    for opt in sorted(cnf.options, key=lambda o: o.order):  # as the files list them
        if opt.group in wanted and opt.name in CLIENT_KEYS and opt.value is not None:
            settings[opt.name] = opt.value
    register_secret(settings.get("password"))
    return settings


def option_sections(cnf: CnfFile) -> dict[str, dict[str, str]]:
    """Every group's connection settings (the last value of each of CLIENT_KEYS), as
    mysqld_exporter reads its my.cnf (go-ini): a group `a.b` takes what it leaves out from
    its parent `a` (`[client.servers]` inherits `[client]`'s password). Passwords are
    registered for redaction."""
    own: dict[str, dict[str, str]] = {g.name: {} for g in cnf.groups}
    for opt in sorted(cnf.options, key=lambda o: o.order):
        if opt.group is not None and opt.name in CLIENT_KEYS and opt.value is not None:
            own.setdefault(opt.group, {})[opt.name] = opt.value
    sections: dict[str, dict[str, str]] = {}
    for name in own:
        parts = name.split(".")
        merged: dict[str, str] = {}
        for end in range(1, len(parts) + 1):  # the parent first, the child over it
            merged.update(own.get(".".join(parts[:end]), {}))
        sections[name] = merged
        register_secret(merged.get("password"))
    return sections


def read_sections(text: str, source: str) -> dict[str, dict[str, str]]:
    """The groups of a my.cnf handed to an exporter flag (`--config.my-cnf`), with their
    inherited settings; includes are not followed (mysqld_exporter does not either). A
    line mysqld would refuse is a ConfigError."""
    cnf = flatten_mycnf(text, source, lambda d: f"not followed ({d.path})")
    fatal = [p for p in cnf.problems if p.fatal]
    if fatal:
        raise ConfigError(f"not a MySQL option file: line {fatal[0].line}: {fatal[0].message}",
                          source=source)
    return option_sections(cnf)


def is_port(text: str) -> bool:
    """A TCP port number (1-65535) as written: at most 5 digits, so a 5,000-digit typo is
    refused before anything converts it."""
    return text.isdigit() and len(text) <= 5 and 0 < int(text) < 65536


def client_dsn(settings: Mapping[str, str], host: str, port: str, socket: str = "") -> str:
    """The mysql:// DSN of a client section's user, password, ssl_ca (and the session's
    log_slow_filter a peer flag adds) at `host:port`
    (or at `socket`); the caller checked the port."""
    auth = quote(settings.get("user", ""), safe="")
    if settings.get("password"):
        auth += ":" + quote(settings["password"], safe="")
    params = [("unix_socket", socket)] if socket else []
    params += [(key, settings[key]) for key in ("ssl_ca", "log_slow_filter")
               if settings.get(key)]
    query = "&".join(f"{k}={quote(v, safe='/')}" for k, v in params)
    return f"mysql://{auth}@{_host(host)}:{port}/" + (f"?{query}" if query else "")


MY_CNF_TARGET = "mysql"  # the target's name: mysqld_exporter has one target per my.cnf


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
