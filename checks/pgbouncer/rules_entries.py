"""Rules on the entries of [databases], [users] and [peers].

Each entry is a connection string (`connstr`) whose keys PgBouncer checks when it loads
the file: an unknown key, a key newer than the version, a bad port or pool_mode refuses
the whole file. The entries PgBouncer accepts are read once into `Check.dbs`
(`model.usable_databases`), which the auth, pooling and sizing rules build on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dbgauge.checks.pgbouncer.connstr import ConnString, parse_connstr
from dbgauge.checks.pgbouncer.ini import Entry
from dbgauge.checks.pgbouncer.model import (
    Check,
    Out,
    bad_pool_mode,
    int_or_none,
    parameter_problem,
)
from dbgauge.checks.pgbouncer.params import DATABASE_KEYS, PEER_KEYS, USER_KEYS
from dbgauge.checks.pgbouncer.rules import ENTRIES
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Severity

# `key= next=...`: cstr_get_value skips the blank after '=' and reads the next word.
_EMPTY_VALUE = re.compile(r"(?:^|\s)(?P<key>[a-z_]+)=[ \t]+(?=[^\s'])")
_POOL_NUMBERS = ("pool_size", "min_pool_size", "reserve_pool", "reserve_pool_size",
                 "max_db_connections", "max_db_client_connections")
_POOL_MODE_FIX = "use session, transaction or statement"

# --------------------------------------------------------------------- [databases]


@ENTRIES.rule("pgbouncer/database", "Invalid [databases] entry")
def reserved_database_name(c: Check, out: Out) -> None:
    """A database named pgbouncer: the name of the admin console."""
    e = c.cfg.databases.get("pgbouncer")
    if e is not None:
        out.add(Severity.ERROR, "database name 'pgbouncer' is reserved for the admin console",
                file=e.source, line=e.line, key="pgbouncer", fix="rename the database entry")


@ENTRIES.rule("pgbouncer/database")
def bad_connection_string(c: Check, out: Out) -> None:
    """A connection string PgBouncer cannot split into key=value pairs."""
    for name, e in c.cfg.databases.items():
        cs = parse_connstr(e.value)
        if name != "pgbouncer" and cs.error:
            out.add(Severity.ERROR, f"connection string of {name!r}: {cs.error}; PgBouncer "
                    "refuses to load the file", file=e.source, line=e.line, key=name,
                    fix="write key=value pairs separated by spaces; quote values with '...'")


@ENTRIES.rule("pgbouncer/database")
def empty_value(c: Check, out: Out) -> None:
    """`host= port=5432`: PgBouncer skips the blank and takes the next word as the value."""
    for line in c.lines:
        for m in _EMPTY_VALUE.finditer(line.entry.value):
            k = m.group("key")
            out.add(Severity.ERROR, f"{line.name!r}: {k}= is empty, and PgBouncer does not "
                    f"read it as empty: it skips the space and takes the next word "
                    f"{line.cs.get(k)!r} as the {k}", file=line.entry.source,
                    line=line.entry.line, key=line.name,
                    fix=f"write {k}=VALUE, or remove {k}= (host: no host means the Unix "
                        "socket)")


def _refusal(name: str, problem: str | None, k: str, val: str) -> tuple[str, str | None] | None:
    """(message, fix) of a parameter whose name or value PgBouncer refuses."""
    if problem == "unknown":
        near = did_you_mean(k, DATABASE_KEYS)
        return (f"{name!r}: unrecognized connection parameter {k!r}; PgBouncer refuses to "
                "load the file", f"did you mean {near!r}?" if near else None)
    if problem == "port":
        return f"{name!r}: invalid port {val!r}", None
    if problem == "pool_mode":
        return f"{name!r}: invalid pool_mode {val!r}", _POOL_MODE_FIX
    return None


@ENTRIES.rule("pgbouncer/database")
def refused_connection_parameter(c: Check, out: Out) -> None:
    """An unknown connection parameter, an invalid port or pool_mode: the file is refused."""
    for line in c.lines:
        for k, val in line.cs.pairs:
            refusal = _refusal(line.name, parameter_problem(k, val, c.v), k, val)
            if refusal is not None:
                out.add(Severity.ERROR, refusal[0], file=line.entry.source,
                        line=line.entry.line, key=line.name, fix=refusal[1])


@ENTRIES.rule("pgbouncer/version")
def database_parameter_too_new(c: Check, out: Out) -> None:
    """A connection parameter newer than the version validated for."""
    for line in c.lines:
        for k, val in line.cs.pairs:
            if parameter_problem(k, val, c.v) == "too new":
                out.add(Severity.ERROR, f"{line.name!r}: connection parameter {k!r} needs "
                        f"PgBouncer {version_text(DATABASE_KEYS[k])}+", file=line.entry.source,
                        line=line.entry.line, key=line.name)


@ENTRIES.rule("pgbouncer/database")
def pool_number_not_integer(c: Check, out: Out) -> None:
    """A pool size or limit that is not an integer, which PgBouncer reads as 0 (warning)."""
    for line in c.lines:
        for k, val in line.cs.pairs:
            if k in _POOL_NUMBERS and parameter_problem(k, val, c.v) is None and \
                    not re.fullmatch(r"-?\d+", val):
                out.add(Severity.WARNING, f"{line.name!r}: {k}={val!r} is not an integer; "
                        "PgBouncer reads it as 0", file=line.entry.source,
                        line=line.entry.line, key=line.name)


@ENTRIES.rule("pgbouncer/database")
def database_min_pool_above_pool(c: Check, out: Out) -> None:
    """A database's min_pool_size above its pool size (warning)."""
    default = int_or_none(c.value("default_pool_size"))
    for db in c.dbs:
        effective = db.pool_size if db.pool_size is not None else default
        if db.min_pool_size is not None and effective is not None and \
                db.min_pool_size > effective:
            out.add(Severity.WARNING, f"{db.name!r}: min_pool_size {db.min_pool_size} is "
                    f"larger than its pool size {effective}", file=db.entry.source,
                    line=db.entry.line, key=db.name)


@ENTRIES.rule("pgbouncer/database")
def min_pool_above_default_pool(c: Check, out: Out) -> None:
    """The global min_pool_size above default_pool_size: pools never grow that far."""
    min_pool = int_or_none(c.value("min_pool_size"))
    pool = int_or_none(c.value("default_pool_size"))
    if min_pool and pool is not None and min_pool > pool and "min_pool_size" in c.cfg.settings:
        out.at(Severity.WARNING, "min_pool_size",
               f"min_pool_size {min_pool} is larger than default_pool_size {pool}: pools "
               f"stop at {pool}", "lower min_pool_size or raise default_pool_size")


# ------------------------------------------------------------------------- [users]


def _user_pairs(c: Check) -> Iterator[tuple[str, Entry, str, str]]:
    """(user, entry, key, value) of every [users] line that parses."""
    for name, e in c.cfg.users.items():
        cs = parse_connstr(e.value)
        if not cs.error:
            for k, val in cs.pairs:
                yield name, e, k, val


@ENTRIES.rule("pgbouncer/user", "Invalid [users] entry")
def bad_user_settings(c: Check, out: Out) -> None:
    """A [users] line PgBouncer cannot split into key=value pairs."""
    for name, e in c.cfg.users.items():
        cs = parse_connstr(e.value)
        if cs.error:
            out.add(Severity.ERROR, f"settings of user {name!r}: {cs.error}", file=e.source,
                    line=e.line, key=name)


@ENTRIES.rule("pgbouncer/user")
def refused_user_parameter(c: Check, out: Out) -> None:
    """An unknown per-user key or an invalid pool_mode: the file is refused."""
    for name, e, k, val in _user_pairs(c):
        if k not in USER_KEYS:
            near = did_you_mean(k, USER_KEYS)
            out.add(Severity.ERROR, f"user {name!r}: unrecognized user parameter {k!r}; "
                    "PgBouncer refuses to load the file", file=e.source, line=e.line, key=name,
                    fix=f"did you mean {near!r}?" if near else
                    "[users] accepts " + ", ".join(sorted(USER_KEYS)))
        elif c.v >= USER_KEYS[k] and k == "pool_mode" and bad_pool_mode(val):
            out.add(Severity.ERROR, f"user {name!r}: invalid pool_mode {val!r}", file=e.source,
                    line=e.line, key=name, fix=_POOL_MODE_FIX)


@ENTRIES.rule("pgbouncer/version")
def user_parameter_too_new(c: Check, out: Out) -> None:
    """A per-user key newer than the version validated for."""
    for name, e, k, _ in _user_pairs(c):
        since = USER_KEYS.get(k)
        if since is not None and c.v < since:
            out.add(Severity.ERROR, f"user {name!r}: {k!r} needs PgBouncer "
                    f"{version_text(since)}+", file=e.source, line=e.line, key=name)


# ------------------------------------------------------------------------- [peers]


@ENTRIES.rule("pgbouncer/peer", "Invalid [peers] entry")
def bad_peer_id(c: Check, out: Out) -> None:
    """A peer id that is not a number from 1 to 65535."""
    for name, e in c.cfg.peers.items():
        if not (name.isascii() and name.isdigit() and 1 <= int(name) <= 65535):
            out.add(Severity.ERROR, f"peer id {name!r} must be a number from 1 to 65535",
                    file=e.source, line=e.line, key=name)


def _peers(c: Check) -> Iterator[tuple[str, Entry, ConnString]]:
    return ((name, e, parse_connstr(e.value)) for name, e in c.cfg.peers.items())


@ENTRIES.rule("pgbouncer/peer")
def bad_peer_string(c: Check, out: Out) -> None:
    """A peer's connection string PgBouncer cannot split into key=value pairs."""
    for name, e, cs in _peers(c):
        if cs.error:
            out.add(Severity.ERROR, f"peer {name}: {cs.error}", file=e.source, line=e.line,
                    key=name)


@ENTRIES.rule("pgbouncer/peer")
def unknown_peer_key(c: Check, out: Out) -> None:
    """A peer key other than host, port and pool_size."""
    for name, e, cs in _peers(c):
        for k, _ in cs.pairs if not cs.error else ():
            if k not in PEER_KEYS:
                out.add(Severity.ERROR, f"peer {name}: unrecognized connection parameter "
                        f"{k!r}", file=e.source, line=e.line, key=name,
                        fix="peers take host, port and pool_size")


@ENTRIES.rule("pgbouncer/peer")
def peer_without_host(c: Check, out: Out) -> None:
    """A peer without host=."""
    for name, e, cs in _peers(c):
        if not cs.error and cs.get("host") is None:
            out.add(Severity.ERROR, f"peer {name} has no host", file=e.source, line=e.line,
                    key=name)
