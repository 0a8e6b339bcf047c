"""Validate a pgbouncer.ini offline (and against the running pooler with --live).

PgBouncer has no check mode: a bad file shows up when the pooler refuses to start, or
worse, when RELOAD silently keeps the old value of a restart-only key. This check reads
the file the way PgBouncer does (`checks.ini_pgbouncer`), judges every parameter against
the version's table (`checks.data.pgbouncer_params`) and cross-checks authentication,
pooling, TLS and sizing. `check_pgbouncer` is pure; `validate_pgbouncer` does the I/O.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.data.pgbouncer_params import (
    BUILD_DEPENDENT_AUTH,
    DATABASE_KEYS,
    HBA_METHODS,
    HBA_OPTIONS_SINCE,
    KNOWN_VERSIONS,
    LATEST,
    PARAMS,
    PEER_KEYS,
    PEERS_SINCE,
    POOL_MODES,
    USER_KEYS,
    WINDOWS_ONLY,
    Param,
)
from checks.ini_pgbouncer import (
    AuthFile,
    Entry,
    Flattened,
    HbaFile,
    HbaRule,
    Problem,
    flatten,
    parse_auth_file,
    parse_connstr,
    parse_hba,
    parse_pgbouncer_ini,
)
from checks.validation import did_you_mean
from toolkit.db.version import Version, version_text
from toolkit.errors import CheckFailed
from toolkit.result import CheckResult, Finding, Severity, config_result, finding

NAME = "validate pgbouncer"
SECTIONS = ("pgbouncer", "databases", "users", "peers")
PASSWORD_AUTH = ("plain", "md5", "scram-sha-256")
HBA_PASSWORD_METHODS = ("md5", "password", "scram-sha-256")
TRANSACTION_BREAKS = ("SET/RESET", "LISTEN/NOTIFY", "WITH HOLD cursors", "SQL-level PREPARE",
                      "session advisory locks", "temporary tables")

RULES: dict[str, str] = {
    "pgbouncer/syntax": "PgBouncer cannot parse this line",
    "pgbouncer/unknown-section": "Section PgBouncer does not know",
    "pgbouncer/unknown-key": "Parameter PgBouncer does not know",
    "pgbouncer/version": "Parameter or value not available in this PgBouncer version",
    "pgbouncer/bad-value": "Value PgBouncer rejects",
    "pgbouncer/out-of-range": "Number outside the accepted range",
    "pgbouncer/deprecated": "Deprecated parameter or value",
    "pgbouncer/duplicate": "Key set more than once; the last one wins",
    "pgbouncer/value-text": "Value contains text PgBouncer takes literally",
    "pgbouncer/database": "Invalid [databases] entry",
    "pgbouncer/user": "Invalid [users] entry",
    "pgbouncer/peer": "Invalid [peers] entry",
    "pgbouncer/auth": "Authentication setup that cannot work",
    "pgbouncer/auth-open": "Anyone who can reach the listener can log in",
    "pgbouncer/auth-file": "auth_file problem",
    "pgbouncer/hba": "auth_hba_file problem",
    "pgbouncer/admin": "Admin console access",
    "pgbouncer/pool-mode": "Pooling mode caveat",
    "pgbouncer/prepared-statements": "Protocol-level prepared statements",
    "pgbouncer/tls": "TLS setup that cannot work",
    "pgbouncer/sizing": "Connection and file-descriptor sizing",
    "pgbouncer/path": "Relative path",
    "pgbouncer/drift": "Running value differs from the file (RELOAD pending)",
    "pgbouncer/restart-pending": "Restart-only key differs from the file (restart pending)",
    "pgbouncer/live-databases": "Databases in the running pooler differ from the file",
    "pgbouncer/unreachable": "Backend server of a database does not accept connections",
}


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class PgbConfig:
    """The effective configuration: last value per key, entries per section."""

    main: str
    flat: Flattened
    settings: Mapping[str, Entry]
    databases: Mapping[str, Entry]
    users: Mapping[str, Entry]
    peers: Mapping[str, Entry]
    duplicates: tuple[tuple[Entry, Entry], ...]  # (overridden, winner)

    def value(self, key: str, version: Version) -> str | None:
        entry = self.settings.get(key)
        if entry is not None:
            return entry.value
        param = PARAMS.get(key)
        return param.default_for(version) if param else None

    def line_of(self, key: str) -> int | None:
        entry = self.settings.get(key)
        return entry.line if entry else None

    def source_of(self, key: str) -> str:
        entry = self.settings.get(key)
        return entry.source if entry else self.main


def build_config(main: str, flat: Flattened) -> PgbConfig:
    """Group entries by section; later entries win, as in PgBouncer."""
    maps: dict[str, dict[str, Entry]] = {s: {} for s in SECTIONS}
    dups: list[tuple[Entry, Entry]] = []
    for entry in flat.entries:
        target = maps.get(entry.section or "")
        if target is None:
            continue
        old = target.get(entry.key)
        if old is not None:
            dups.append((old, entry))
        target[entry.key] = entry
    return PgbConfig(main, flat, maps["pgbouncer"], maps["databases"], maps["users"],
                     maps["peers"], tuple(dups))


@dataclass(frozen=True)
class Environment:
    """What the pure check needs from outside: versions, limits and auxiliary files."""

    version: Version = LATEST
    max_connections: int | None = None
    reserved_connections: int = 0
    fd_limit: int | None = None
    fd_limit_source: str = "--fd-limit"
    auth_file: AuthFile | str | None = None  # parsed, or why it could not be read
    hba_file: HbaFile | str | None = None
    existing_paths: frozenset[str] = frozenset()  # resolved paths that exist
    resolve: Callable[[str], str] = field(default=lambda p: p)


# ------------------------------------------------------------------------- values


def strtol(text: str) -> int | None:
    """C strtol(text, &end, 0) that must consume everything: 0x1F, 0777, -5."""
    s = text.lstrip(" \t\n\r\v\f")
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", s)
    if not m:
        return None
    sign, body = m.groups()
    if body[:2] in ("0x", "0X"):
        n = int(body, 16)
    elif body.startswith("0"):
        n = int(body, 8) if len(body) > 1 else 0
    else:
        n = int(body)
    return -n if sign == "-" else n


_UNIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(us|ms|s|sec|secs|seconds?|min|mins|minutes?|h|"
                   r"hours?|d|days?|[kKmMgG][bB]?)\s*")
_UNIT_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "secs": 1, "second": 1,
                 "seconds": 1, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
                 "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400,
                 "days": 86400}


def check_value(param: Param, value: str) -> tuple[str | None, str | None, float | None]:
    """(error, fix, number) for one value as PgBouncer's parser would judge it."""
    hint = ""
    if re.search(r"\s[;#]", value):
        hint = " (';' and '#' start a comment only at the beginning of a line)"
    if param.kind in ("int", "uint", "bool"):
        n = strtol(value)
        if n is None:
            m = _UNIT.fullmatch(value)
            if m and param.kind != "bool":
                return (f"{value!r} is not a number: PgBouncer does not accept units here",
                        f"write a plain integer{' in ' + param.name if hint else ''}", None)
            if value.strip().lower() in ("on", "off", "true", "false", "yes", "no"):
                return (f"{value!r} is not a number", "write 1 or 0", None)
            octal = " (a leading 0 means octal)" if re.fullmatch(r"0\d+", value.strip()) else ""
            return (f"{value!r} is not an integer{octal}{hint}", "write a plain integer", None)
        if param.kind == "uint" and n < 0:
            return f"{value!r} must not be negative", None, None
        return None, None, float(n)
    if param.kind == "time":
        s = value.strip()
        try:
            v = float(s) if s and not re.search(r"[^0-9eE+.\-]", s) else math.nan
        except ValueError:
            v = math.nan
        if math.isnan(v) or math.isinf(v):
            m = _UNIT.fullmatch(value)
            if m and m.group(2) in _UNIT_SECONDS:
                seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
                return (f"{value!r}: PgBouncer reads plain seconds and does not accept units",
                        f"write {seconds:g}", None)
            return f"{value!r} is not a number of seconds{hint}", "write seconds, e.g. 30", None
        if v < 0:
            return f"{value!r} is negative", "write 0 to disable", None
        return None, None, v
    if param.kind == "enum":
        if value.lower() not in param.choices:
            near = did_you_mean(value.lower(), param.choices)
            fix = f"did you mean {near!r}?" if near else "use one of " + ", ".join(param.choices)
            return f"{value!r} is not one of {', '.join(param.choices)}{hint}", fix, None
        return None, None, None
    if param.choices and value.lower() not in param.choices:
        return f"{value!r} is not one of {', '.join(param.choices)}", None, None
    return None, None, None


def _is_loopback(addr: str) -> bool:
    a = addr.strip().strip("[]")
    if a in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(a).is_loopback
    except ValueError:
        return False


def non_loopback_listeners(listen_addr: str | None) -> list[str]:
    if not listen_addr:
        return []
    return [a.strip() for a in listen_addr.split(",") if a.strip() and not _is_loopback(a)]


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


# -------------------------------------------------------------------------- checks


class _Out:
    """Collects findings with the config's file/line context."""

    def __init__(self, cfg: PgbConfig) -> None:
        self.cfg = cfg
        self.items: list[Finding] = []

    def add(self, sev: Severity, rule: str, msg: str, *, file: str | None = None,
            line: int | None = None, key: str | None = None, fix: str | None = None) -> None:
        self.items.append(finding(sev, rule, msg, file=file or self.cfg.main, line=line,
                                  key=key, fix=fix))

    def at(self, sev: Severity, rule: str, key: str, msg: str, fix: str | None = None) -> None:
        """A finding about a [pgbouncer] key: at its line, or at the file when defaulted."""
        self.add(sev, rule, msg, file=self.cfg.source_of(key), line=self.cfg.line_of(key),
                 key=key, fix=fix)


def check_pgbouncer(cfg: PgbConfig, env: Environment) -> list[Finding]:
    """Every offline check of one configuration; pure given `env`."""
    out = _Out(cfg)
    v = env.version
    for p in cfg.flat.problems:
        out.add(Severity.ERROR if p.fatal else Severity.WARNING, "pgbouncer/syntax", p.message,
                file=p.source, line=p.line,
                fix=None if not p.fatal else "PgBouncer refuses to start (or a RELOAD fails) "
                                             "until this line is fixed")
    _check_sections(cfg, out, v)
    _check_params(cfg, out, v)
    for old, new in cfg.duplicates:
        out.add(Severity.WARNING, "pgbouncer/duplicate",
                f"[{new.section}] {new.key} is also set at {old.source}:{old.line}; "
                "this later value wins", file=new.source, line=new.line, key=new.key,
                fix="keep one definition")
    dbs = _check_databases(cfg, out, v)
    _check_users(cfg, out, v)
    _check_peers(cfg, out, v)
    _check_auth(cfg, env, out, dbs)
    _check_pooling(cfg, out, v, dbs)
    _check_tls(cfg, env, out)
    _check_sizing(cfg, env, out, dbs)
    _check_paths(cfg, out)
    return out.items


def _check_sections(cfg: PgbConfig, out: _Out, v: Version) -> None:
    for s in cfg.flat.sections:
        if s.name not in SECTIONS:
            near = did_you_mean(s.name.lower(), SECTIONS)
            out.add(Severity.ERROR, "pgbouncer/unknown-section",
                    f"unknown section [{s.name}]: PgBouncer refuses to load the file",
                    file=s.source, line=s.line,
                    fix=f"did you mean [{near}]?" if near else "sections are [databases], "
                        "[users], [peers] and [pgbouncer] (lower case)")
        elif s.name == "peers" and v < PEERS_SINCE:
            out.add(Severity.ERROR, "pgbouncer/version",
                    f"[peers] needs PgBouncer {version_text(PEERS_SINCE)}+ "
                    f"(validating for {version_text(v)})", file=s.source, line=s.line)
    if "pgbouncer" not in {s.name for s in cfg.flat.sections}:
        out.add(Severity.WARNING, "pgbouncer/unknown-section",
                "no [pgbouncer] section: every setting is at its default (md5 auth, no "
                "auth_file, listening only on the Unix socket)", line=1)


def _check_params(cfg: PgbConfig, out: _Out, v: Version) -> None:
    for key, e in cfg.settings.items():
        param = PARAMS.get(key)
        if key in WINDOWS_ONLY:
            out.add(Severity.ERROR, "pgbouncer/unknown-key",
                    f"{key} exists only in Windows builds; elsewhere it is an unknown "
                    "parameter and PgBouncer refuses to start", file=e.source, line=e.line,
                    key=key, fix=f"use {WINDOWS_ONLY[key]}")
            continue
        if param is None:
            near = did_you_mean(key, PARAMS) or did_you_mean(key.lower(), PARAMS)
            where = ("a [databases] connection parameter" if key in DATABASE_KEYS else None)
            fix = f"did you mean {near!r}?" if near else (
                f"{key} is {where}, not a [pgbouncer] setting" if where else
                "remove it; PgBouncer refuses to start with an unknown parameter")
            out.add(Severity.ERROR, "pgbouncer/unknown-key",
                    f"unknown parameter {key!r}: PgBouncer refuses to start", file=e.source,
                    line=e.line, key=key, fix=fix)
            continue
        if not param.exists_in(v):
            if v < param.since:
                msg = (f"{key} was added in PgBouncer {version_text(param.since)}; "
                       f"{version_text(v)} refuses to start with it")
            else:
                msg = f"{key} was removed in PgBouncer {version_text(param.until or v)}"
            out.add(Severity.ERROR, "pgbouncer/version", msg, file=e.source, line=e.line,
                    key=key, fix="remove it or upgrade PgBouncer")
            continue
        err, value_fix, number = check_value(param, e.value)
        if err:
            out.add(Severity.ERROR, "pgbouncer/bad-value", err, file=e.source, line=e.line,
                    key=key, fix=value_fix)
            continue
        if number is not None:
            if (param.minimum is not None and number < param.minimum) or (
                    param.maximum is not None and number > param.maximum):
                if param.maximum is None:
                    allowed = f"at least {param.minimum:g}"
                elif param.minimum is None:
                    allowed = f"at most {param.maximum:g}"
                else:
                    allowed = f"from {param.minimum:g} to {param.maximum:g}"
                out.add(Severity.ERROR, "pgbouncer/out-of-range",
                        f"{e.value} is out of range: {key} must be {allowed}", file=e.source,
                        line=e.line, key=key, fix=f"use a value {allowed}")
            elif param.kind == "bool" and number not in (0, 1):
                out.add(Severity.WARNING, "pgbouncer/bad-value",
                        f"{e.value} is taken as true; this switch expects 0 or 1",
                        file=e.source, line=e.line, key=key, fix="write 1 or 0")
        elif param.kind in ("str", "list", "path") and re.search(r"\s[;#]", e.value):
            out.add(Severity.WARNING, "pgbouncer/value-text",
                    f"value {e.value!r} contains ' ;' or ' #': PgBouncer has no inline "
                    "comments, this text is part of the value", file=e.source, line=e.line,
                    key=key, fix="move the comment to its own line")
        if param.deprecated:
            out.add(Severity.WARNING, "pgbouncer/deprecated", param.deprecated,
                    file=e.source, line=e.line, key=key)
    auth_type = (cfg.value("auth_type", v) or "").lower()
    if auth_type == "ldap" and v < (1, 25):
        out.at(Severity.ERROR, "pgbouncer/version", "auth_type",
               f"auth_type ldap needs PgBouncer 1.25+ (validating for {version_text(v)})")
    if auth_type in BUILD_DEPENDENT_AUTH:
        out.at(Severity.INFO, "pgbouncer/auth", "auth_type",
               f"auth_type {auth_type} exists only in PgBouncer builds configured "
               f"{BUILD_DEPENDENT_AUTH[auth_type]}; check `pgbouncer -V` on the target host")
    if auth_type == "plain":
        out.at(Severity.WARNING, "pgbouncer/deprecated", "auth_type",
               "auth_type plain sends passwords in clear text and is deprecated",
               "use scram-sha-256")


@dataclass(frozen=True)
class _Db:
    name: str
    entry: Entry
    host: str | None
    port: int
    forced_user: str | None
    pool_size: int | None
    reserve: int | None
    max_db_connections: int | None
    pool_mode: str | None
    auth_user: str | None


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _check_databases(cfg: PgbConfig, out: _Out, v: Version) -> list[_Db]:
    dbs: list[_Db] = []
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
            elif k == "port" and not (val.isdigit() and 0 < int(val) < 65536):
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
        if bad or name == "*":
            if name == "*" and not bad:
                dbs.append(_Db(name, e, cs.get("host"), _int_or_none(cs.get("port")) or 5432,
                               cs.get("user"), None, None, None, None, cs.get("auth_user")))
            continue
        pool_size = _int_or_none(cs.get("pool_size"))
        mode = cs.get("pool_mode")
        dbs.append(_Db(name, e, cs.get("host"), _int_or_none(cs.get("port")) or 5432,
                       cs.get("user"), pool_size,
                       _int_or_none(cs.get("reserve_pool") or cs.get("reserve_pool_size")),
                       _int_or_none(cs.get("max_db_connections")),
                       mode.lower() if mode else None, cs.get("auth_user")))
        min_pool = _int_or_none(cs.get("min_pool_size"))
        effective = pool_size if pool_size is not None else _int_or_none(
            cfg.value("default_pool_size", v))
        if min_pool is not None and effective is not None and min_pool > effective:
            out.add(Severity.WARNING, "pgbouncer/database",
                    f"{name!r}: min_pool_size {min_pool} is larger than its pool size "
                    f"{effective}", file=e.source, line=e.line, key=name)
    return dbs


def _check_users(cfg: PgbConfig, out: _Out, v: Version) -> None:
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


def _check_peers(cfg: PgbConfig, out: _Out, v: Version) -> None:
    for name, e in cfg.peers.items():
        if not (name.isdigit() and 1 <= int(name) <= 65535):
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


def _referenced_users(cfg: PgbConfig, v: Version,
                      dbs: Sequence[_Db]) -> dict[str, tuple[str, str, int | None]]:
    """User name -> (why PgBouncer needs it, file, line where it is referenced)."""
    users: dict[str, tuple[str, str, int | None]] = {}
    for key in ("admin_users", "stats_users"):
        for u in _csv(cfg.value(key, v)):
            users.setdefault(u, (key, cfg.source_of(key), cfg.line_of(key)))
    for name, e in cfg.users.items():
        users.setdefault(name, ("[users]", e.source, e.line))
    for db in dbs:
        if db.forced_user:
            users.setdefault(db.forced_user, (f"user= of database {db.name!r}",
                                              db.entry.source, db.entry.line))
    return users


def _check_auth(cfg: PgbConfig, env: Environment, out: _Out, dbs: Sequence[_Db]) -> None:
    v = env.version
    auth_type = (cfg.value("auth_type", v) or "md5").lower()
    auth_file_path = cfg.value("auth_file", v)
    auth_user = cfg.value("auth_user", v)
    db_auth_users = [db for db in dbs if db.auth_user]
    listeners = non_loopback_listeners(cfg.value("listen_addr", v))
    auth = env.auth_file if isinstance(env.auth_file, AuthFile) else None
    hba = env.hba_file if isinstance(env.hba_file, HbaFile) else None
    uses_file = auth_type in ("trust", "plain", "md5", "cert", "hba", "scram-sha-256")

    if auth_type in ("trust", "any") and listeners:
        out.at(Severity.ERROR, "pgbouncer/auth-open", "auth_type",
               f"auth_type {auth_type} with listen_addr {', '.join(listeners)}: anyone who "
               "can reach the port logs in without a password",
               "listen on 127.0.0.1 / a Unix socket only, or use scram-sha-256")
    if auth_type == "any":
        out.at(Severity.WARNING, "pgbouncer/auth", "auth_type",
               "auth_type any: no authentication at all, and every client is admin on the "
               "console", "use scram-sha-256 (or hba with peer for local users)")
        for db in dbs:
            if not db.forced_user:
                out.add(Severity.ERROR, "pgbouncer/auth",
                        f"auth_type any needs a forced user: database {db.name!r} has no "
                        "user=, so PgBouncer cannot log into the server for its clients",
                        file=db.entry.source, line=db.entry.line, key=db.name,
                        fix="add user=NAME (and password=) to the connection string")
    if auth_type == "pam" and (auth_user or db_auth_users):
        where = "auth_user" if auth_user else f"auth_user of {db_auth_users[0].name!r}"
        out.at(Severity.ERROR, "pgbouncer/auth", "auth_type",
               f"auth_type pam cannot be combined with {where}: PAM users are not looked "
               "up with auth_query", "remove auth_user or use another auth_type")
    if auth_type == "cert":
        mode = (cfg.value("client_tls_sslmode", v) or "disable").lower()
        if mode not in ("verify-ca", "verify-full"):
            out.at(Severity.ERROR, "pgbouncer/auth", "client_tls_sslmode",
                   f"auth_type cert needs client certificates, but client_tls_sslmode is "
                   f"{mode}", "set client_tls_sslmode = verify-full and client_tls_ca_file")
    if auth_type == "hba":
        _check_hba(cfg, env, out, hba, listeners)
    password_methods = auth_type in PASSWORD_AUTH or (
        auth_type == "hba" and hba is not None and
        any(r.method in HBA_PASSWORD_METHODS for r in hba.rules))
    if password_methods and not auth_file_path and not auth_user and not db_auth_users:
        out.at(Severity.ERROR, "pgbouncer/auth", "auth_type",
               f"auth_type {auth_type} needs passwords, but neither auth_file nor auth_user "
               "(with auth_query) is set: nobody can log in",
               "set auth_file, or auth_user plus auth_query")
    if auth_type == "trust" and not auth_file_path:
        out.at(Severity.ERROR, "pgbouncer/auth", "auth_type",
               "auth_type trust still requires each user to be listed in auth_file, and "
               "no auth_file is set: nobody can log in", "set auth_file")
    if not uses_file or not auth_file_path:
        _check_admin(cfg, out, v, auth_type, None)
        return
    if isinstance(env.auth_file, str):
        out.at(Severity.ERROR, "pgbouncer/auth-file", "auth_file",
               f"cannot read auth_file {auth_file_path}: {env.auth_file}",
               "create it or fix the path; without it no user from the file can log in")
        _check_admin(cfg, out, v, auth_type, None)
        return
    if auth is None:
        _check_admin(cfg, out, v, auth_type, None)
        return
    for p in auth.problems:
        out.add(Severity.ERROR, "pgbouncer/auth-file", p.message, file=auth.source,
                line=p.line, fix="each line is \"user\" \"password\"; comments start with ';'")
    seen: dict[str, int] = {}
    for u in auth.users:
        if u.name in seen:
            out.add(Severity.WARNING, "pgbouncer/auth-file",
                    f"user {u.name!r} is listed again (first at line {seen[u.name]}); the "
                    "last entry wins", file=auth.source, line=u.line, key=u.name)
        seen.setdefault(u.name, u.line)
        if u.secret_kind == "bad-scram":
            out.add(Severity.ERROR, "pgbouncer/auth-file",
                    f"user {u.name!r}: malformed SCRAM secret", file=auth.source, line=u.line,
                    key=u.name, fix="copy rolpassword from pg_authid verbatim")
        elif u.secret_kind == "md5" and auth_type == "scram-sha-256":
            out.add(Severity.ERROR, "pgbouncer/auth-file",
                    f"user {u.name!r} has an md5 hash, which cannot verify a SCRAM login "
                    "(auth_type scram-sha-256)", file=auth.source, line=u.line, key=u.name,
                    fix="store the SCRAM secret or the plain password")
        elif u.secret_kind == "empty" and auth_type in PASSWORD_AUTH:
            out.add(Severity.WARNING, "pgbouncer/auth-file",
                    f"user {u.name!r} has an empty password and cannot log in with "
                    f"{auth_type}", file=auth.source, line=u.line, key=u.name)
    names = {u.name for u in auth.users}
    if auth_type == "trust":
        for user, (why, src, line) in _referenced_users(cfg, v, dbs).items():
            if user not in names:
                out.add(Severity.ERROR, "pgbouncer/auth-file",
                        f"user {user!r} ({why}) is not in auth_file {auth.source}: under "
                        "auth_type trust PgBouncer rejects users it does not find there",
                        file=src, line=line, key=user,
                        fix=f'add a line "{user}" "" to {auth.source}')
    _check_admin(cfg, out, v, auth_type, names)


def _check_admin(cfg: PgbConfig, out: _Out, v: Version, auth_type: str,
                 file_users: set[str] | None) -> None:
    admins = _csv(cfg.value("admin_users", v))
    if not admins and auth_type != "any":
        out.at(Severity.WARNING, "pgbouncer/admin", "admin_users",
               "no admin_users: nobody can run RELOAD, PAUSE or SHOW on the admin console "
               "over TCP (only the OS user running PgBouncer, via the Unix socket)",
               "list the operators' database users in admin_users")
    if file_users is None or auth_type in ("trust", "any") or cfg.value("auth_dbname", v):
        return
    for key in ("admin_users", "stats_users"):
        for user in _csv(cfg.value(key, v)):
            if user not in file_users:
                out.at(Severity.WARNING, "pgbouncer/admin", key,
                       f"{user!r} is not in auth_file, and without auth_dbname the console "
                       "does not use auth_query: this user cannot log into the console",
                       "add the user to auth_file or set auth_dbname")


def _check_hba(cfg: PgbConfig, env: Environment, out: _Out, hba: HbaFile | None,
               listeners: list[str]) -> None:
    v = env.version
    path = cfg.value("auth_hba_file", v)
    if not path:
        out.at(Severity.ERROR, "pgbouncer/hba", "auth_hba_file",
               "auth_type hba without auth_hba_file: PgBouncer rejects every login",
               "set auth_hba_file to a pg_hba.conf-style file")
        return
    if isinstance(env.hba_file, str):
        out.at(Severity.ERROR, "pgbouncer/hba", "auth_hba_file",
               f"cannot read auth_hba_file {path}: {env.hba_file}; PgBouncer rejects every "
               "login")
        return
    if hba is None:
        return
    for p in hba.problems:
        out.add(Severity.ERROR if p.fatal else Severity.WARNING, "pgbouncer/hba", p.message,
                file=hba.source, line=p.line)
    if not hba.rules:
        out.add(Severity.ERROR, "pgbouncer/hba", "no valid rule: PgBouncer rejects every login",
                file=hba.source, line=1)
    for rule in hba.rules:
        _check_hba_rule(rule, hba.source, v, out, listeners)


def _check_hba_rule(rule: HbaRule, source: str, v: Version, out: _Out,
                    listeners: list[str]) -> None:
    since = HBA_METHODS.get(rule.method)
    if rule.method in ("pam", "any"):
        out.add(Severity.ERROR, "pgbouncer/hba",
                f"method {rule.method} only works as a global auth_type, not in the HBA "
                "file; PgBouncer skips this line", file=source, line=rule.line)
        return
    if since is None:
        near = did_you_mean(rule.method, HBA_METHODS)
        out.add(Severity.ERROR, "pgbouncer/hba",
                f"unsupported method {rule.method!r}; PgBouncer skips this line",
                file=source, line=rule.line, fix=f"did you mean {near!r}?" if near else None)
        return
    if v < since:
        out.add(Severity.ERROR, "pgbouncer/version",
                f"method {rule.method} needs PgBouncer {version_text(since)}+; this line "
                "is skipped", file=source, line=rule.line)
    for opt in rule.options:
        name = opt.split("=", 1)[0]
        if v < HBA_OPTIONS_SINCE:
            out.add(Severity.ERROR, "pgbouncer/hba",
                    f"option {opt!r} needs PgBouncer {version_text(HBA_OPTIONS_SINCE)}+; "
                    "older versions skip the whole line", file=source, line=rule.line)
        elif name != "map" and not (rule.method == "ldap" and name.startswith("ldap")):
            out.add(Severity.ERROR, "pgbouncer/hba", f"unsupported option {opt!r}",
                    file=source, line=rule.line)
    if rule.method == "peer" and rule.type != "local":
        out.add(Severity.WARNING, "pgbouncer/hba",
                f"peer works only on Unix sockets; this {rule.type} rule never "
                "authenticates anyone", file=source, line=rule.line, fix="use local")
    if rule.method == "cert" and rule.type in ("host", "hostnossl"):
        out.add(Severity.WARNING, "pgbouncer/hba",
                f"cert needs a TLS connection; on a {rule.type} rule plain connections fail",
                file=source, line=rule.line, fix="use hostssl")
    if rule.method == "trust" and rule.network and listeners:
        net = ipaddress.ip_network(rule.network)
        if not net.is_loopback:
            out.add(Severity.ERROR, "pgbouncer/auth-open",
                    f"trust for {rule.network} while listening on {', '.join(listeners)}: "
                    "anyone from that network logs in without a password", file=source,
                    line=rule.line, fix="restrict to 127.0.0.1/32 or use scram-sha-256")


def _modes_in_use(cfg: PgbConfig, v: Version, dbs: Sequence[_Db]) -> set[str]:
    modes = {(cfg.value("pool_mode", v) or "session").lower()}
    modes |= {db.pool_mode for db in dbs if db.pool_mode}
    for e in cfg.users.values():
        mode = parse_connstr(e.value).get("pool_mode")
        if mode:
            modes.add(mode.lower())
    return modes


def _check_pooling(cfg: PgbConfig, out: _Out, v: Version, dbs: Sequence[_Db]) -> None:
    modes = _modes_in_use(cfg, v, dbs)
    pooled = modes & {"transaction", "statement"}
    always = strtol(cfg.value("server_reset_query_always", v) or "0") or 0
    if pooled:
        out.at(Severity.INFO, "pgbouncer/pool-mode", "pool_mode",
               f"{'/'.join(sorted(pooled))} pooling: clients must not rely on "
               f"{', '.join(TRANSACTION_BREAKS)} across transactions")
        reset = cfg.settings.get("server_reset_query")
        if reset is not None and reset.value and not always and "session" not in modes:
            out.at(Severity.WARNING, "pgbouncer/pool-mode", "server_reset_query",
                   "server_reset_query runs only in session pooling (unless "
                   "server_reset_query_always = 1); with transaction pooling it is ignored",
                   "remove it, or set server_reset_query_always = 1 if you need it")
        elif always and reset is not None and reset.value:
            out.at(Severity.INFO, "pgbouncer/pool-mode", "server_reset_query_always",
                   f"server_reset_query ({reset.value}) runs after every transaction")
        if v >= (1, 21):
            mps = strtol(cfg.value("max_prepared_statements", v) or "0")
            if mps == 0:
                out.at(Severity.WARNING, "pgbouncer/prepared-statements",
                       "max_prepared_statements",
                       "max_prepared_statements = 0 with transaction pooling: protocol-level "
                       "prepared statements (most drivers' default) fail with 'prepared "
                       "statement does not exist'", "set max_prepared_statements = 200")
        else:
            out.at(Severity.INFO, "pgbouncer/prepared-statements", "pool_mode",
                   f"PgBouncer {version_text(v)} cannot track protocol-level prepared "
                   "statements (1.21+ can): disable them in the client drivers")
    if "statement" in modes:
        out.at(Severity.INFO, "pgbouncer/pool-mode", "pool_mode",
               "statement pooling refuses multi-statement transactions")
    ignored = {p.lower() for p in _csv(cfg.value("ignore_startup_parameters", v))}
    dropped = sorted(ignored & {"options", "search_path"})
    if dropped:
        out.at(Severity.WARNING, "pgbouncer/pool-mode", "ignore_startup_parameters",
               f"ignore_startup_parameters drops {', '.join(dropped)} silently: session "
               "settings clients pass at connect (e.g. options=-c statement_timeout=...) "
               "never reach the server",
               "set those settings per role/database on the server (ALTER ROLE ... SET)")


def _check_tls(cfg: PgbConfig, env: Environment, out: _Out) -> None:
    v = env.version
    for side in ("client", "server"):
        mode = (cfg.value(f"{side}_tls_sslmode", v) or "disable").lower()
        key_k, cert_k, ca_k = (f"{side}_tls_key_file", f"{side}_tls_cert_file",
                               f"{side}_tls_ca_file")
        key, cert, ca = (cfg.value(key_k, v), cfg.value(cert_k, v), cfg.value(ca_k, v))
        for k, path in ((key_k, key), (cert_k, cert), (ca_k, ca)):
            if path and env.resolve(path) not in env.existing_paths:
                out.at(Severity.ERROR, "pgbouncer/tls", k,
                       f"{path} does not exist (or is not readable): TLS setup fails and "
                       "PgBouncer does not start", "fix the path")
        if side == "client" and mode != "disable":
            for k, path in ((key_k, key), (cert_k, cert)):
                if not path:
                    out.at(Severity.ERROR, "pgbouncer/tls", k,
                           f"client_tls_sslmode {mode} needs {k}: PgBouncer fails TLS setup",
                           f"set {k}")
        if mode in ("verify-ca", "verify-full") and not ca:
            out.at(Severity.ERROR if side == "client" else Severity.WARNING, "pgbouncer/tls",
                   ca_k, f"{side}_tls_sslmode {mode} needs {ca_k} to verify certificates",
                   f"set {ca_k}")
        if side == "server" and bool(key) != bool(cert):
            out.at(Severity.ERROR, "pgbouncer/tls", key_k if key else cert_k,
                   "server_tls_key_file and server_tls_cert_file must be set together")
        protocols = (cfg.value(f"{side}_tls_protocols", v) or "").lower()
        weak = [p for p in ("tlsv1.0", "tlsv1.1", "all", "legacy") if p in protocols]
        if weak and mode != "disable":
            out.at(Severity.WARNING, "pgbouncer/tls", f"{side}_tls_protocols",
                   f"{side}_tls_protocols allows {', '.join(weak)} (deprecated, insecure)",
                   "use secure (TLS 1.2 and 1.3)")


def _check_sizing(cfg: PgbConfig, env: Environment, out: _Out, dbs: Sequence[_Db]) -> None:
    v = env.version
    default_pool = strtol(cfg.value("default_pool_size", v) or "20") or 0
    reserve_default = strtol(cfg.value("reserve_pool_size", v) or "0") or 0
    global_max_db = strtol(cfg.value("max_db_connections", v) or "0") or 0
    auth = env.auth_file if isinstance(env.auth_file, AuthFile) else None
    known_users = ({u.name for u in auth.users} if auth else set()) | set(cfg.users)
    n_users = max(1, len(known_users))
    by_backend: dict[str, int] = {}
    pool_total = 0
    for db in dbs:
        if db.name == "*":
            continue
        size = db.pool_size if db.pool_size is not None else default_pool
        reserve = db.reserve if db.reserve is not None else reserve_default
        pools = 1 if db.forced_user else n_users
        worst = pools * (size + reserve)
        cap = db.max_db_connections if db.max_db_connections else global_max_db
        if cap:
            worst = min(worst, cap)
        pool_total += pools * size
        backend = f"{db.host or 'unix socket'}:{db.port}"
        by_backend[backend] = by_backend.get(backend, 0) + worst
    if env.max_connections is not None:
        limit = env.max_connections - env.reserved_connections
        for backend, worst in sorted(by_backend.items()):
            if worst > limit:
                out.add(Severity.ERROR, "pgbouncer/sizing",
                        f"up to {worst} server connections to {backend} (pool size + reserve "
                        f"per pool, {n_users} user(s) per database without a forced user), "
                        f"but PostgreSQL allows {env.max_connections} - "
                        f"{env.reserved_connections} reserved = {limit}: clients will get "
                        "'too many clients'", line=None,
                        fix="lower default_pool_size / reserve_pool_size, cap with "
                            "max_db_connections, or raise max_connections")
    max_client = strtol(cfg.value("max_client_conn", v) or "100") or 0
    need = max_client + pool_total + 10
    if env.fd_limit is not None and need > env.fd_limit:
        out.at(Severity.WARNING, "pgbouncer/sizing", "max_client_conn",
               f"max_client_conn {max_client} + {pool_total} server connections need about "
               f"{need} file descriptors, above the limit {env.fd_limit} "
               f"({env.fd_limit_source}): connections fail with 'Too many open files'",
               "raise LimitNOFILE (systemd) / ulimit -n, or lower max_client_conn")


_PATH_KEYS = ("auth_file", "auth_hba_file", "auth_ident_file", "client_tls_ca_file",
              "client_tls_cert_file", "client_tls_key_file", "server_tls_ca_file",
              "server_tls_cert_file", "server_tls_key_file", "logfile", "pidfile",
              "resolv_conf", "unix_socket_dir")


def _check_paths(cfg: PgbConfig, out: _Out) -> None:
    for key in _PATH_KEYS:
        e = cfg.settings.get(key)
        if e and e.value and not e.value.startswith(("/", "@", "~")):
            out.add(Severity.INFO, "pgbouncer/path",
                    f"relative path {e.value!r}: PgBouncer resolves it against its working "
                    "directory (dbgauge checked it next to the config file)",
                    file=e.source, line=e.line, key=key, fix="use an absolute path")
    for inc in cfg.flat.includes:
        if not os.path.isabs(inc.path):
            out.add(Severity.INFO, "pgbouncer/path",
                    f"relative %include {inc.path}: PgBouncer resolves it against its working "
                    "directory (dbgauge: next to the including file)", file=inc.source,
                    line=inc.line, fix="use an absolute path")


# -------------------------------------------------------------------- live (pure parts)


def _normalize(param: Param | None, value: Any) -> Any:
    if value is None:
        return ""
    text = str(value).strip()
    if param is None:
        return text
    if param.kind in ("int", "uint", "bool"):
        n = strtol(text)
        return n if n is not None else text
    if param.kind == "time":
        try:
            return float(text)
        except ValueError:
            return text
    if param.kind == "enum":
        return text.lower()
    if param.kind == "list":
        return ",".join(p.strip() for p in text.split(","))
    return text


_NOT_COMPARED = {"conffile", "verbose", "user"}  # set by the command line, not the file


def compare_show_config(cfg: PgbConfig, rows: Iterable[Mapping[str, Any]],
                        node: str) -> list[Finding]:
    """File vs `SHOW CONFIG`: drift (RELOAD pending) or restart-only keys that differ."""
    out: list[Finding] = []
    for row in rows:
        key = str(row.get("key"))
        if key in _NOT_COMPARED:
            continue
        param = PARAMS.get(key)
        entry = cfg.settings.get(key)
        if entry is not None:
            expected_raw: Any = entry.value
        elif "default" in row:
            expected_raw = row.get("default")
        else:
            continue
        expected, actual = _normalize(param, expected_raw), _normalize(param, row.get("value"))
        if expected == actual:
            continue
        restart = str(row.get("changeable", "yes")).lower() == "no"
        shown = expected_raw if entry is not None else f"{expected_raw} (default)"
        if restart:
            msg = (f"running value {row.get('value')!r}, file says {shown!r}: restart-only "
                   "key, RELOAD keeps the running value")
            fix = "restart PgBouncer (or `pgbouncer -R` / so_reuseport rolling restart)"
            rule = "pgbouncer/restart-pending"
        else:
            msg = f"running value {row.get('value')!r}, file says {shown!r}"
            fix = "run RELOAD on the admin console (or SIGHUP) if the file is what you want"
            rule = "pgbouncer/drift"
        out.append(finding(Severity.WARNING, rule, msg, node=node,
                           file=entry.source if entry else cfg.main,
                           line=entry.line if entry else None, key=key, fix=fix))
    return out


def compare_show_databases(cfg: PgbConfig, rows: Iterable[Mapping[str, Any]],
                           node: str) -> list[Finding]:
    """[databases] of the file vs `SHOW DATABASES` of the running pooler."""
    out: list[Finding] = []
    running = {str(r.get("name")): r for r in rows}
    for name, e in cfg.databases.items():
        if name in ("*", "pgbouncer"):
            continue
        row = running.get(name)
        if row is None:
            out.append(finding(Severity.WARNING, "pgbouncer/live-databases",
                               f"database {name!r} is in the file but not in the running "
                               "pooler", node=node, file=e.source, line=e.line, key=name,
                               fix="RELOAD"))
            continue
        cs = parse_connstr(e.value)
        if cs.error:
            continue
        want = {"host": cs.get("host"), "port": cs.get("port") or "5432",
                "database": cs.get("dbname") or name}
        for col, val in want.items():
            have = row.get(col)
            if (str(have) if have is not None else None) != val:
                out.append(finding(Severity.WARNING, "pgbouncer/live-databases",
                                   f"database {name!r}: running {col} {have!r}, file says "
                                   f"{val!r}", node=node, file=e.source, line=e.line,
                                   key=name, fix="RELOAD"))
    for name in running:
        if name == "pgbouncer" or name in cfg.databases:
            continue
        if "*" in cfg.databases:
            continue  # auto-created from the fallback entry
        out.append(finding(Severity.WARNING, "pgbouncer/live-databases",
                           f"database {name!r} is served by the running pooler but no longer "
                           "in the file", node=node, file=cfg.main, key=name,
                           fix="RELOAD drops it (clients connected to it are kept)"))
    return out


def backends_of(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, int]]:
    """(database, host, port) of each SHOW DATABASES row that has a TCP or socket host."""
    out = []
    for r in rows:
        if r.get("name") == "pgbouncer" or not r.get("host"):
            continue
        for host in str(r["host"]).split(","):
            out.append((str(r["name"]), host.strip(), int(r.get("port") or 5432)))
    return out


# ---------------------------------------------------------------------------- I/O


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def load_config(path: str) -> PgbConfig:
    """Read and flatten the main file and its includes (CheckFailed if unreadable)."""
    path = os.path.normpath(path)
    p = Path(path)
    try:
        text = _read_text(p)
    except OSError as exc:
        raise CheckFailed(f"cannot read {path}: {exc.strerror or exc}") from None
    base = p.parent

    def resolve(inc: str, _src: str) -> tuple[str, str] | str:
        target = Path(os.path.normpath(inc if os.path.isabs(inc) else base / inc))
        try:
            return _read_text(target), str(target)
        except OSError as exc:
            return f"cannot read {target}: {exc.strerror or exc}"

    flat = flatten(parse_pgbouncer_ini(text, path), resolve)
    return build_config(path, flat)


def environment_for(cfg: PgbConfig, version: Version, *, max_connections: int | None = None,
                    reserved_connections: int = 0, fd_limit: int | None = None) -> Environment:
    """Read the files the configuration points at; resolve relative paths next to it."""
    base = Path(cfg.main).parent

    def resolve(p: str) -> str:
        q = Path(os.path.expanduser(p))
        return str(q if q.is_absolute() else base / q)

    def read(key: str, parse: Callable[[str, str], Any]) -> Any:
        value = cfg.value(key, version)
        if not value:
            return None
        target = resolve(value)
        try:
            return parse(_read_text(Path(target)), target)
        except OSError as exc:
            return str(exc.strerror or exc)

    auth_type = (cfg.value("auth_type", version) or "").lower()
    existing = set()
    for key in _PATH_KEYS:
        value = cfg.value(key, version)
        if value and os.access(resolve(value), os.R_OK):
            existing.add(resolve(value))
    fd_source = "--fd-limit"
    if fd_limit is None:
        import resource

        fd_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        fd_source = "soft RLIMIT_NOFILE of this shell; pass --fd-limit for the service's"
        if fd_limit == resource.RLIM_INFINITY:
            fd_limit = None
    return Environment(
        version=version, max_connections=max_connections,
        reserved_connections=reserved_connections, fd_limit=fd_limit,
        fd_limit_source=fd_source,
        auth_file=read("auth_file", parse_auth_file),
        hba_file=read("auth_hba_file", parse_hba) if auth_type == "hba" else None,
        existing_paths=frozenset(existing), resolve=resolve)


def _reachable(host: str, port: int, timeout: float) -> str | None:
    if host.startswith("/"):
        sock_path = os.path.join(host, f".s.PGSQL.{port}")
        return None if os.path.exists(sock_path) else f"no socket {sock_path}"
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def live_findings(cfg: PgbConfig, dsn: str, *, password: str | None = None,
                  timeout: float = 3.0) -> tuple[Version, list[Finding]]:
    """Connect to the admin console; compare SHOW CONFIG / SHOW DATABASES with the file."""
    from toolkit.db import connect_dsn
    from toolkit.dsn import parse_dsn

    params = parse_dsn(dsn)
    conn = connect_dsn(dsn, password=password, kind="pgbouncer", connect_timeout=timeout)
    try:
        if conn.server.flavor != "pgbouncer":
            raise CheckFailed(f"{params.address} is not a PgBouncer admin console")
        node = f"pgbouncer {params.address}"
        findings = compare_show_config(cfg, conn.query("validate_show_config"), node)
        rows = conn.query("validate_show_databases")
        findings += compare_show_databases(cfg, rows, node)
        version = conn.server.version[:2]
    finally:
        conn.close()
    backends = sorted(set(backends_of(rows)))
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(backends)))) as pool:
        results = list(pool.map(lambda b: _reachable(b[1], b[2], timeout), backends))
    for (db, host, port), err in zip(backends, results, strict=True):
        if err:
            e = cfg.databases.get(db)
            findings.append(finding(Severity.ERROR, "pgbouncer/unreachable",
                                    f"database {db!r}: backend {host}:{port} does not accept "
                                    f"connections ({err})", node=node,
                                    file=e.source if e else cfg.main,
                                    line=e.line if e else None, key=db,
                                    fix="check the server, the host/port in [databases], and "
                                        "firewalls between PgBouncer and PostgreSQL"))
    return version, findings


def postgres_limits(dsn: str, password: str | None = None) -> tuple[int, int]:
    """max_connections and the reserved slots of a PostgreSQL server."""
    from toolkit.db import connect_dsn

    conn = connect_dsn(dsn, password=password, kind="postgres")
    try:
        row = conn.query("max_connections")[0]
        return int(row["max_connections"]), int(row.get("reserved_connections") or 0)
    finally:
        conn.close()


@dataclass(frozen=True)
class PgbouncerOptions:
    version: Version | None = None  # None: the live server's, else the latest known
    live_dsn: str | None = None
    postgres_dsn: str | None = None
    max_connections: int | None = None
    reserved_connections: int = 0
    fd_limit: int | None = None
    password: str | None = None


def validate_pgbouncer(path: str, opts: PgbouncerOptions) -> CheckResult:
    """The whole `dbgauge validate pgbouncer`: offline checks, then the live ones."""
    cfg = load_config(path)
    findings: list[Finding] = []
    version = opts.version
    if opts.live_dsn:
        live_version, live = live_findings(cfg, opts.live_dsn, password=opts.password)
        findings += live
        if version is None:
            version = live_version if live_version in KNOWN_VERSIONS else (
                LATEST if live_version > LATEST else KNOWN_VERSIONS[0])
    version = version or LATEST
    max_conn, reserved = opts.max_connections, opts.reserved_connections
    if opts.postgres_dsn:
        max_conn, reserved = postgres_limits(opts.postgres_dsn, opts.password)
    env = environment_for(cfg, version, max_connections=max_conn,
                          reserved_connections=reserved, fd_limit=opts.fd_limit)
    findings = check_pgbouncer(cfg, env) + findings
    return config_result(f"{NAME} {path} (PgBouncer {version_text(version)})", findings)


__all__ = ["RULES", "Environment", "PgbConfig", "PgbouncerOptions", "Problem",
           "build_config", "check_pgbouncer", "compare_show_config",
           "compare_show_databases", "load_config", "validate_pgbouncer"]
