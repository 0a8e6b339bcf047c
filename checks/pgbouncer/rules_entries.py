"""Rules on the entries of [databases], [users] and [peers].

Each entry is a connection string (`connstr`) whose keys PgBouncer checks when it loads
the file: an unknown key, a key newer than the version, a bad port or pool_mode refuses
the whole file. `check_databases` also returns the entries it could read as `Db`s, which
the auth, pooling and sizing rules build on.
"""

from __future__ import annotations

import re

from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.model import Db, Out, PgbConfig, int_or_none
from dbgauge.checks.pgbouncer.params import DATABASE_KEYS, PEER_KEYS, POOL_MODES, USER_KEYS
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.result import Severity

# `key= next=...`: cstr_get_value skips the blank after '=' and reads the next word.
_EMPTY_VALUE = re.compile(r"(?:^|\s)(?P<key>[a-z_]+)=[ \t]+(?=[^\s'])")


def check_databases(cfg: PgbConfig, out: Out, v: Version) -> list[Db]:
    """Every [databases] entry; the valid ones (and the `*` fallback) as `Db`s."""
    dbs: list[Db] = []
    for name, e in cfg.databases.items():
        if name == "pgbouncer":
            out.add(Severity.ERROR, "pgbouncer/database",
                    "database name 'pgbouncer' is reserved for the admin console",
                    file=e.source, line=e.line, key=name, fix="rename the database entry")
            continue
        cs = parse_connstr(e.value)
        if cs.error:
            out.add(Severity.ERROR, "pgbouncer/database",
                    f"connection string of {name!r}: {cs.error}; PgBouncer refuses to load "
                    "the file", file=e.source, line=e.line, key=name,
                    fix="write key=value pairs separated by spaces; quote values with '...'")
            continue
        bad = False
        for m in _EMPTY_VALUE.finditer(e.value):
            k = m.group("key")
            taken = cs.get(k)
            out.add(Severity.ERROR, "pgbouncer/database",
                    f"{name!r}: {k}= is empty, and PgBouncer does not read it as empty: it "
                    f"skips the space and takes the next word {taken!r} as the {k}",
                    file=e.source, line=e.line, key=name,
                    fix=f"write {k}=VALUE, or remove {k}= (host: no host means the Unix "
                        "socket)")
        for k, val in cs.pairs:
            since = DATABASE_KEYS.get(k)
            if since is None:
                near = did_you_mean(k, DATABASE_KEYS)
                out.add(Severity.ERROR, "pgbouncer/database",
                        f"{name!r}: unrecognized connection parameter {k!r}; PgBouncer "
                        "refuses to load the file", file=e.source, line=e.line, key=name,
                        fix=f"did you mean {near!r}?" if near else None)
                bad = True
            elif v < since:
                out.add(Severity.ERROR, "pgbouncer/version",
                        f"{name!r}: connection parameter {k!r} needs PgBouncer "
                        f"{version_text(since)}+", file=e.source, line=e.line, key=name)
                bad = True
            elif k == "port" and not (val.isascii() and val.isdigit() and 0 < int(val) < 65536):
                out.add(Severity.ERROR, "pgbouncer/database",
                        f"{name!r}: invalid port {val!r}", file=e.source, line=e.line, key=name)
                bad = True
            elif k == "pool_mode" and val.lower() not in POOL_MODES:
                out.add(Severity.ERROR, "pgbouncer/database",
                        f"{name!r}: invalid pool_mode {val!r}", file=e.source, line=e.line,
                        key=name, fix="use session, transaction or statement")
                bad = True
            elif k in ("pool_size", "min_pool_size", "reserve_pool", "reserve_pool_size",
                       "max_db_connections", "max_db_client_connections") and \
                    not re.fullmatch(r"-?\d+", val):
                out.add(Severity.WARNING, "pgbouncer/database",
                        f"{name!r}: {k}={val!r} is not an integer; PgBouncer reads it as 0",
                        file=e.source, line=e.line, key=name)
        if bad:
            continue
        pool_size = int_or_none(cs.get("pool_size"))
        mode = cs.get("pool_mode")
        dbs.append(Db(name, e, cs.get("host"), int_or_none(cs.get("port")) or 5432,
                       cs.get("user"), pool_size,
                       int_or_none(cs.get("reserve_pool") or cs.get("reserve_pool_size")),
                       int_or_none(cs.get("max_db_connections")),
                       mode.lower() if mode else None, cs.get("auth_user")))
        min_pool = int_or_none(cs.get("min_pool_size"))
        effective = pool_size if pool_size is not None else int_or_none(
            cfg.value("default_pool_size", v))
        if min_pool is not None and effective is not None and min_pool > effective:
            out.add(Severity.WARNING, "pgbouncer/database",
                    f"{name!r}: min_pool_size {min_pool} is larger than its pool size "
                    f"{effective}", file=e.source, line=e.line, key=name)
    return dbs


def check_min_pool(cfg: PgbConfig, out: Out, v: Version) -> None:
    """The global min_pool_size above default_pool_size: pools never grow that far."""
    min_pool = int_or_none(cfg.value("min_pool_size", v))
    pool = int_or_none(cfg.value("default_pool_size", v))
    if min_pool and pool is not None and min_pool > pool and "min_pool_size" in cfg.settings:
        out.at(Severity.WARNING, "pgbouncer/database", "min_pool_size",
               f"min_pool_size {min_pool} is larger than default_pool_size {pool}: pools "
               f"stop at {pool}", "lower min_pool_size or raise default_pool_size")


def check_users(cfg: PgbConfig, out: Out, v: Version) -> None:
    """Every [users] entry: known per-user keys in this version, a valid pool_mode."""
    for name, e in cfg.users.items():
        cs = parse_connstr(e.value)
        if cs.error:
            out.add(Severity.ERROR, "pgbouncer/user", f"settings of user {name!r}: {cs.error}",
                    file=e.source, line=e.line, key=name)
            continue
        for k, val in cs.pairs:
            since = USER_KEYS.get(k)
            if since is None:
                near = did_you_mean(k, USER_KEYS)
                out.add(Severity.ERROR, "pgbouncer/user",
                        f"user {name!r}: unrecognized user parameter {k!r}; PgBouncer "
                        "refuses to load the file", file=e.source, line=e.line, key=name,
                        fix=f"did you mean {near!r}?" if near else
                        "[users] accepts " + ", ".join(sorted(USER_KEYS)))
            elif v < since:
                out.add(Severity.ERROR, "pgbouncer/version",
                        f"user {name!r}: {k!r} needs PgBouncer {version_text(since)}+",
                        file=e.source, line=e.line, key=name)
            elif k == "pool_mode" and val.lower() not in POOL_MODES:
                out.add(Severity.ERROR, "pgbouncer/user",
                        f"user {name!r}: invalid pool_mode {val!r}", file=e.source,
                        line=e.line, key=name, fix="use session, transaction or statement")


def check_peers(cfg: PgbConfig, out: Out, v: Version) -> None:
    """Every [peers] entry: a numeric peer id, host/port/pool_size only, a host."""
    for name, e in cfg.peers.items():
        if not (name.isascii() and name.isdigit() and 1 <= int(name) <= 65535):
            out.add(Severity.ERROR, "pgbouncer/peer",
                    f"peer id {name!r} must be a number from 1 to 65535", file=e.source,
                    line=e.line, key=name)
        cs = parse_connstr(e.value)
        if cs.error:
            out.add(Severity.ERROR, "pgbouncer/peer", f"peer {name}: {cs.error}",
                    file=e.source, line=e.line, key=name)
            continue
        for k, _ in cs.pairs:
            if k not in PEER_KEYS:
                out.add(Severity.ERROR, "pgbouncer/peer",
                        f"peer {name}: unrecognized connection parameter {k!r}",
                        file=e.source, line=e.line, key=name, fix="peers take host, port "
                                                                  "and pool_size")
        if cs.get("host") is None:
            out.add(Severity.ERROR, "pgbouncer/peer", f"peer {name} has no host",
                    file=e.source, line=e.line, key=name)
