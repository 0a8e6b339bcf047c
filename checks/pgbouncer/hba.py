"""Pure parser of PgBouncer's auth_hba_file, as `hba.c` reads it.

It is pg_hba.conf with fewer features: no host names, `all`/`samehost`/`samenet`
addresses, `samerole`, `replication` or `+group`. Unlike a bad ini line, a bad HBA line
is skipped while the rest still loads, so each one becomes a `Problem` and parsing goes on.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from dbgauge.checks.pgbouncer.tokens import Problem, is_space, read_quoted

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
        if is_space(ch):
            i += 1
        elif ch == "#":
            break
        elif ch == ",":
            tokens.append(",")
            i += 1
        elif ch == '"':
            val, i = read_quoted(line, i)
            if val is None:
                return None
            tokens.append('"' + val)  # mark quoted: keywords lose their meaning
        else:
            start = i
            while i < n and not is_space(line[i]) and line[i] not in ',#"':
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
                return tuple(names), i, "group membership (+role) is not supported"
        names.append(tok.lstrip('"') if tok.startswith('"') else tok)
        i += 1
        if i < len(tokens) and tokens[i] == ",":
            i += 1
            continue
        return tuple(names), i, None


def parse_hba(text: str, source: str) -> HbaFile:
    """Rules of a PgBouncer auth_hba_file; bad lines become problems and are skipped.

    The file is whatever the config names (/etc/shadow, /proc/self/environ): a problem
    names its line and what was expected, never the text found there."""
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
            problems.append(Problem("unknown connection type (expected one of "
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
                    problems.append(Problem("the address needs a /prefix or a netmask"
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
        return "", ("the address is not an IPv4/IPv6 address (PgBouncer supports no "
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
            return "", "invalid netmask (expected an address like 255.255.255.0)", False
    elif prefix:
        if not (prefix.isascii() and prefix.isdigit()) or len(prefix) > 3 or \
                int(prefix) > ip.max_prefixlen:
            return "", f"invalid prefix length /{prefix}", False
        bits = int(prefix)
    net = ipaddress.ip_network(f"{ip}/{bits}", strict=False)
    return str(net), None, net.network_address != ip and bits < ip.max_prefixlen
