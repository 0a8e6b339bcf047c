"""Pure parsers for PgBouncer's files: pgbouncer.ini, connection strings, auth_file, HBA.

They follow PgBouncer's own readers (libusual `parse_ini_file`, `cstr_get_pair` and
`load_auth_file` in loader.c, `hba.c`) rather than Python's configparser, because the
differences are exactly what bites operators: a comment is only a comment at the start
of a line, `;` later in a line is part of the value, keys are case-sensitive, an
auth_file line that does not start with a double quote ends the file ("broken auth
file"), and a bad HBA line is skipped while the rest still loads.

Every function takes text and returns frozen dataclasses with line numbers; none of
them does I/O or raises on bad input: garbage becomes located `Problem`s.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

_KEY_CHARS = re.compile(r"[A-Za-z0-9_.\-*]+")
_INCLUDE = re.compile(r"%include[ \t]+(?P<path>.*?)\s*$")
MAX_INCLUDE_DEPTH = 10  # libusual refuses deeper nesting
MAX_USERNAME = 128  # PgBouncer's MAX_USERNAME (bytes, including the terminator)


@dataclass(frozen=True)
class Problem:
    """Something PgBouncer would reject (fatal) or only log (not fatal), with its place."""

    message: str
    source: str
    line: int
    fatal: bool = True


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


def _isspace(ch: str) -> bool:
    return ch in " \t\n\r\v\f"


def parse_pgbouncer_ini(text: str, source: str) -> ParsedIni:
    """Parse one pgbouncer.ini file as libusual does, line by line, keeping order."""
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
                items.append(Problem(f"syntax error: text after section header: {rest!r}",
                                     source, lineno))
            continue
        if line[0] == "%":
            m = _INCLUDE.match(line)
            if m and m.group("path"):
                items.append(Include(m.group("path"), source, lineno))
            else:
                items.append(Problem(f"syntax error: unknown directive {line.split()[0]!r} "
                                     "(only '%include FILE' exists)", source, lineno))
            continue
        key, pos, err = _read_key(line)
        if err:
            items.append(Problem(err, source, lineno))
            continue
        while pos < len(line) and line[pos] in " \t":
            pos += 1
        if pos >= len(line) or line[pos] != "=":
            items.append(Problem(f"syntax error: expected '=' after {key!r}", source, lineno))
            continue
        value = line[pos + 1:].lstrip(" \t").rstrip(" \t\n\r\v\f")
        items.append(Entry(key, value, source, lineno))
    if nul_problem:
        items.append(nul_problem)
    return ParsedIni(source, tuple(items))


def _read_key(line: str) -> tuple[str, int, str | None]:
    if line[0] == '"':  # quoted database name, "" stands for one quote
        out, i = [], 1
        while i < len(line):
            if line[i] == '"':
                if i + 1 < len(line) and line[i + 1] == '"':
                    out.append('"')
                    i += 2
                    continue
                return "".join(out), i + 1, None
            out.append(line[i])
            i += 1
        return "", 0, "syntax error: unterminated double quote in key"
    m = _KEY_CHARS.match(line)
    if not m:
        return "", 0, f"syntax error: {line[0]!r} cannot start a key"
    return m.group(0), m.end(), None


Resolver = Callable[[str, str], "tuple[str, str] | str"]
"""(include path, including source) -> (text, resolved source), or an error message."""


@dataclass(frozen=True)
class Flattened:
    """All files of one configuration, includes expanded in place, sections assigned."""

    entries: tuple[Entry, ...]
    sections: tuple[Section, ...]
    problems: tuple[Problem, ...]
    sources: tuple[str, ...]
    includes: tuple[Include, ...] = ()


def flatten(parsed: ParsedIni, resolve: Resolver,
            parse: Callable[[str, str], ParsedIni] = parse_pgbouncer_ini) -> Flattened:
    """Expand `%include` where it appears; an included file continues the current section."""
    entries: list[Entry] = []
    sections: list[Section] = []
    problems: list[Problem] = []
    sources: list[str] = [parsed.source]
    includes: list[Include] = []
    current: list[str | None] = [None]

    def walk(doc: ParsedIni, depth: int, stack: tuple[str, ...]) -> None:
        for item in doc.items:
            if isinstance(item, Section):
                current[0] = item.name
                sections.append(item)
            elif isinstance(item, Entry):
                if current[0] is None:
                    problems.append(Problem(f"{item.key!r} is set before any [section]",
                                            item.source, item.line))
                entries.append(replace(item, section=current[0]))
            elif isinstance(item, Problem):
                problems.append(item)
            else:
                includes.append(item)
                if depth >= MAX_INCLUDE_DEPTH:
                    problems.append(Problem(f"%include nested deeper than {MAX_INCLUDE_DEPTH}",
                                            item.source, item.line))
                    continue
                got = resolve(item.path, item.source)
                if isinstance(got, str):
                    problems.append(Problem(f"%include {item.path}: {got}", item.source,
                                            item.line))
                    continue
                text, resolved = got
                if resolved in stack:
                    problems.append(Problem(f"%include {item.path} includes itself "
                                            "(include loop)", item.source, item.line))
                    continue
                sources.append(resolved)
                walk(parse(text, resolved), depth + 1, (*stack, resolved))

    walk(parsed, 0, (parsed.source,))
    return Flattened(tuple(entries), tuple(sections), tuple(problems), tuple(sources),
                     tuple(includes))


# --------------------------------------------------------------------- connection strings


@dataclass(frozen=True)
class ConnString:
    pairs: tuple[tuple[str, str], ...]
    error: str | None = None

    def get(self, key: str) -> str | None:
        found = None
        for k, v in self.pairs:
            if k == key:
                found = v
        return found


def parse_connstr(value: str) -> ConnString:
    """`key=value key='quoted ''value'''` as PgBouncer's cstr_get_pair reads it."""
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(value)
    while True:
        while i < n and _isspace(value[i]):
            i += 1
        if i >= n:
            return ConnString(tuple(pairs))
        start = i
        while i < n and value[i] not in "= ":
            i += 1
        key = value[start:i]
        while i < n and _isspace(value[i]):
            i += 1
        if i >= n or value[i] != "=" or not key:
            return ConnString(tuple(pairs), f"expected key=value at {value[start:start + 20]!r}")
        i += 1
        while i < n and _isspace(value[i]):
            i += 1
        if i < n and value[i] == "'":
            i += 1
            out = []
            while True:
                if i >= n:
                    return ConnString(tuple(pairs), f"unterminated quote in value of {key!r}")
                if value[i] == "'":
                    if i + 1 < n and value[i + 1] == "'":
                        out.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                out.append(value[i])
                i += 1
            val = "".join(out)
        else:
            vstart = i
            while i < n and value[i] != " ":
                i += 1
            val = value[vstart:i]
        if not val:
            return ConnString(tuple(pairs), f"empty value for {key!r}")
        pairs.append((key, val))


# ------------------------------------------------------------------------------ auth_file


@dataclass(frozen=True)
class AuthUser:
    name: str
    secret_kind: str  # "plain", "md5", "scram", "empty"
    line: int


@dataclass(frozen=True)
class AuthFile:
    source: str
    users: tuple[AuthUser, ...]
    problems: tuple[Problem, ...]


_MD5 = re.compile(r"md5[0-9a-f]{32}")
_B64 = r"[A-Za-z0-9+/=]+"
_SCRAM = re.compile(rf"SCRAM-SHA-256\$(?P<iter>\d+):{_B64}\${_B64}:{_B64}")


def _quoted(line: str, i: int) -> tuple[str | None, int]:
    """Read "..." with "" escapes starting at line[i] == '"'."""
    out, i = [], i + 1
    while i < len(line):
        if line[i] == '"':
            if i + 1 < len(line) and line[i + 1] == '"':
                out.append('"')
                i += 2
                continue
            return "".join(out), i + 1
        out.append(line[i])
        i += 1
    return None, i


def parse_auth_file(text: str, source: str) -> AuthFile:
    """Users of an auth_file. Like PgBouncer, stop at the first broken line."""
    users: list[AuthUser] = []
    problems: list[Problem] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(" \t\r\v\f")
        if not line or line.startswith(";"):
            continue
        stop = ("; PgBouncer stops reading the auth_file here, so users on later lines "
                "cannot log in")
        if not line.startswith('"'):
            hint = " ('#' is not a comment in auth_file, use ';')" if line[0] == "#" else ""
            problems.append(Problem(f"broken auth file: line does not start with '\"'{hint}"
                                    + stop, source, lineno))
            break
        name, pos = _quoted(line, 0)
        if name is None:
            problems.append(Problem("broken auth file: unterminated user name" + stop,
                                    source, lineno))
            break
        if len(name.encode()) >= MAX_USERNAME:
            problems.append(Problem(f"user name longer than {MAX_USERNAME - 1} bytes" + stop,
                                    source, lineno))
            break
        rest = line[pos:]
        q = rest.find('"')
        if q < 0:
            problems.append(Problem(f"broken auth file: no password field for {name!r}; "
                                    "PgBouncer would take the next line's first field as "
                                    "its password", source, lineno))
            break
        secret, _ = _quoted(rest, q)
        if secret is None:
            problems.append(Problem(f"broken auth file: unterminated password of {name!r}"
                                    + stop, source, lineno))
            break
        users.append(AuthUser(name, _secret_kind(secret), lineno))
    return AuthFile(source, tuple(users), tuple(problems))


def _secret_kind(secret: str) -> str:
    if not secret:
        return "empty"
    if _MD5.fullmatch(secret):
        return "md5"
    if secret.startswith("SCRAM-SHA-256$"):
        return "scram" if _SCRAM.fullmatch(secret) else "bad-scram"
    return "plain"


# ------------------------------------------------------------------------------ HBA file

HBA_TYPES = ("local", "host", "hostssl", "hostnossl")


@dataclass(frozen=True)
class HbaRule:
    line: int
    type: str
    databases: tuple[str, ...]
    users: tuple[str, ...]
    network: str | None  # "10.0.0.0/8"; None for local
    method: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class HbaFile:
    source: str
    rules: tuple[HbaRule, ...]
    problems: tuple[Problem, ...]


def _hba_tokens(line: str) -> list[str] | None:
    """Split like hba.c: whitespace separates, ',' is its own token, '#' ends the line."""
    tokens: list[str] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if _isspace(ch):
            i += 1
        elif ch == "#":
            break
        elif ch == ",":
            tokens.append(",")
            i += 1
        elif ch == '"':
            val, i = _quoted(line, i)
            if val is None:
                return None
            tokens.append('"' + val)  # mark quoted: keywords lose their meaning
        else:
            start = i
            while i < n and not _isspace(line[i]) and line[i] not in ',#"':
                i += 1
            tokens.append(line[start:i])
    return tokens


def _names(tokens: list[str], i: int, is_db: bool) -> tuple[tuple[str, ...], int, str | None]:
    names: list[str] = []
    while True:
        if i >= len(tokens) or tokens[i] == ",":
            return tuple(names), i, "expected a name"
        tok = tokens[i]
        if not tok.startswith('"'):
            if is_db and tok in ("samerole", "samegroup", "replication"):
                return tuple(names), i, f"{tok!r} is not supported by PgBouncer"
            if tok.startswith("+"):
                return tuple(names), i, f"group membership {tok!r} is not supported"
        names.append(tok.lstrip('"') if tok.startswith('"') else tok)
        i += 1
        if i < len(tokens) and tokens[i] == ",":
            i += 1
            continue
        return tuple(names), i, None


def parse_hba(text: str, source: str) -> HbaFile:
    """Rules of a PgBouncer auth_hba_file; bad lines become problems and are skipped."""
    rules: list[HbaRule] = []
    problems: list[Problem] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        tokens = _hba_tokens(raw)
        if tokens is None:
            problems.append(Problem("unterminated double quote; PgBouncer skips this line",
                                    source, lineno))
            continue
        if not tokens:
            continue
        skip = "; PgBouncer skips this line"
        rtype = tokens[0]
        if rtype not in HBA_TYPES:
            problems.append(Problem(f"unknown connection type {rtype!r} (expected one of "
                                    f"{', '.join(HBA_TYPES)}){skip}", source, lineno))
            continue
        dbs, i, err = _names(tokens, 1, True)
        if err:
            problems.append(Problem(f"database field: {err}{skip}", source, lineno))
            continue
        users, i, err = _names(tokens, i, False)
        if err:
            problems.append(Problem(f"user field: {err}{skip}", source, lineno))
            continue
        network = None
        if rtype != "local":
            if i >= len(tokens):
                problems.append(Problem(f"missing address{skip}", source, lineno))
                continue
            addr = tokens[i]
            i += 1
            mask = None
            if "/" not in addr:
                if i >= len(tokens):
                    problems.append(Problem(f"address {addr!r} needs a /prefix or a netmask"
                                            + skip, source, lineno))
                    continue
                mask = tokens[i]
                i += 1
            net, err, loose = _network(addr, mask)
            if err:
                problems.append(Problem(f"{err}{skip}", source, lineno))
                continue
            if loose:
                problems.append(Problem(f"address {addr} has bits outside its mask; "
                                        f"PgBouncer matches {net}", source, lineno,
                                        fatal=False))
            network = net
        if i >= len(tokens):
            problems.append(Problem(f"missing authentication method{skip}", source, lineno))
            continue
        method = tokens[i].lstrip('"')
        rules.append(HbaRule(lineno, rtype, dbs, users, network, method,
                             tuple(t.lstrip('"') for t in tokens[i + 1:])))
    return HbaFile(source, tuple(rules), tuple(problems))


def _network(addr: str, mask: str | None) -> tuple[str, str | None, bool]:
    """('10.0.0.0/8', error, host-bits-set) for an address with /prefix or netmask."""
    host, _, prefix = addr.partition("/")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "", (f"address {host!r} is not an IPv4/IPv6 address (PgBouncer supports no "
                    "host names, 'all', 'samehost' or 'samenet')"), False
    bits: int = ip.max_prefixlen
    if mask is not None:
        try:
            m = ipaddress.ip_address(mask)
            if m.version != ip.version:
                raise ValueError
            net = ipaddress.ip_network(f"{ip}/{m}", strict=False)
            bits = net.prefixlen
        except ValueError:
            return "", f"invalid netmask {mask!r}", False
    elif prefix:
        if not prefix.isdigit() or int(prefix) > ip.max_prefixlen:
            return "", f"invalid prefix length /{prefix}", False
        bits = int(prefix)
    net = ipaddress.ip_network(f"{ip}/{bits}", strict=False)
    return str(net), None, net.network_address != ip and bits < ip.max_prefixlen
