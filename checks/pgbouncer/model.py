"""The model every pgbouncer.ini rule reads: the effective configuration and its surroundings.

`PgbConfig` is what PgBouncer would end up with after reading the file and its includes
(the last value of each key wins, per section); `Environment` is what a pure check needs
from outside (the version, PostgreSQL's and the OS's limits, the parsed auth_file and HBA
file, which paths exist). `check_value` judges one value the way PgBouncer's parsers do
(strtol, strtod, enum lookup). What the rules read: `Check` (a configuration, its
environment and its [databases] entries, read once: `DbLine`, `Db`), `LiveRows` and
`Backends` (what a running pooler answered); `Out` is where one rule's findings go,
with their file and line.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbgauge.checks.pgbouncer.authfile import AuthFile
from dbgauge.checks.pgbouncer.connstr import ConnString, parse_connstr
from dbgauge.checks.pgbouncer.hba import HbaFile
from dbgauge.checks.pgbouncer.ini import Entry, Flattened, Section
from dbgauge.checks.pgbouncer.params import DATABASE_KEYS, LATEST, PARAMS, POOL_MODES, Param
from dbgauge.checks.validation import Emitter, did_you_mean
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.result import Finding, Severity

SECTIONS = ("pgbouncer", "databases", "users", "peers")
PATH_KEYS = ("auth_file", "auth_hba_file", "auth_ident_file", "client_tls_ca_file",
             "client_tls_cert_file", "client_tls_key_file", "server_tls_ca_file",
             "server_tls_cert_file", "server_tls_key_file", "logfile", "pidfile",
             "resolv_conf", "unix_socket_dir")
READ_KEYS = (*PATH_KEYS[:9], "resolv_conf")  # files PgBouncer reads (not log/pid/socket)


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
    # Settings a later [pgbouncer] header reset to their defaults: (lost entry, header)
    reset: tuple[tuple[Entry, Section], ...] = ()

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
    """Group entries by section; later entries win, as in PgBouncer. Each [pgbouncer]
    header starts from the defaults again (PgBouncer 1.18, tested): settings above the
    last one are lost."""
    maps: dict[str, dict[str, Entry]] = {s: {} for s in SECTIONS}
    dups: list[tuple[Entry, Entry]] = []
    headers = [i for i, s in enumerate(flat.sections, start=1) if s.name == "pgbouncer"]
    last = headers[-1] if headers else 0
    reset = [(e, flat.sections[last - 1]) for e in flat.entries
             if e.section == "pgbouncer" and e.header < last]
    for entry in flat.entries:
        if entry.section == "pgbouncer" and entry.header < last:
            continue
        target = maps.get(entry.section or "")
        if target is None:
            continue
        old = target.get(entry.key)
        if old is not None:
            dups.append((old, entry))
        target[entry.key] = entry
    return PgbConfig(main, flat, maps["pgbouncer"], maps["databases"], maps["users"],
                     maps["peers"], tuple(dups), tuple(reset))


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
    # (key, path as written): absolute paths absent on this host, not judged at all
    not_here: tuple[tuple[str, str], ...] = ()
    read_from: tuple[tuple[str, str], ...] = ()  # (key, file actually read)
    root: str | None = None  # --root: absolute paths were looked up under it


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
    """The listen_addr entries reachable from other hosts (`*` included)."""
    if not listen_addr:
        return []
    return [a.strip() for a in listen_addr.split(",") if a.strip() and not _is_loopback(a)]


def split_list(value: str | None) -> list[str]:
    """A comma-separated list setting (admin_users, ...) as its non-empty items."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]


class Out(Emitter):
    """The findings of one rule about one configuration, with its file/line context;
    `node` is set for findings about a running pooler."""

    def __init__(self, cfg: PgbConfig, items: list[Finding], rule: str, node: str = "") -> None:
        super().__init__(items, rule)
        self.cfg = cfg
        self.node = node

    @classmethod
    def live(cls, cfg: PgbConfig, node: str) -> Callable[[list[Finding], str], Out]:
        """Emitters for findings about the pooler `node` runs with `cfg`."""
        return lambda items, rule: cls(cfg, items, rule, node)

    def add(self, sev: Severity, msg: str, *, file: str | None = None, line: int | None = None,
            key: str | None = None, fix: str | None = None) -> None:
        """A finding anywhere: the main file unless `file` says otherwise."""
        self.emit(sev, msg, node=self.node, file=file or self.cfg.main, line=line, key=key,
                  fix=fix)

    def at(self, sev: Severity, key: str, msg: str, fix: str | None = None) -> None:
        """A finding about a [pgbouncer] key: at its line, or at the file when defaulted."""
        self.add(sev, msg, file=self.cfg.source_of(key), line=self.cfg.line_of(key), key=key,
                 fix=fix)


@dataclass(frozen=True)
class DbLine:
    """A [databases] entry whose connection string parsed (the admin console's name aside)."""

    name: str
    entry: Entry
    cs: ConnString


@dataclass(frozen=True)
class Db:
    """A [databases] entry PgBouncer accepts, as the pool rules read it."""

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
    min_pool_size: int | None


def int_or_none(text: str | None) -> int | None:
    """A connection-string number, or None when absent or not a plain integer."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def bad_pool_mode(value: str) -> bool:
    return value.lower() not in POOL_MODES


def parameter_problem(key: str, value: str, version: Version) -> str | None:
    """Why PgBouncer refuses the file over this [databases] connection parameter:
    "unknown", "too new" (for the version), "port" or "pool_mode" (a value it cannot
    read); None if it takes it."""
    since = DATABASE_KEYS.get(key)
    if since is None:
        return "unknown"
    if version < since:
        return "too new"
    if key == "port" and not (value.isascii() and value.isdigit() and 0 < int(value) < 65536):
        return "port"
    if key == "pool_mode" and bad_pool_mode(value):
        return "pool_mode"
    return None


def database_lines(cfg: PgbConfig) -> tuple[DbLine, ...]:
    """[databases] entries with a connection string PgBouncer can split into pairs."""
    lines = (DbLine(name, e, parse_connstr(e.value)) for name, e in cfg.databases.items()
             if name != "pgbouncer")
    return tuple(line for line in lines if not line.cs.error)


def usable_databases(lines: tuple[DbLine, ...], version: Version) -> tuple[Db, ...]:
    """The entries PgBouncer accepts (and the `*` fallback), read once for the pool rules."""
    dbs = []
    for line in lines:
        cs = line.cs
        if any(parameter_problem(k, val, version) for k, val in cs.pairs):
            continue
        mode = cs.get("pool_mode")
        dbs.append(Db(line.name, line.entry, cs.get("host"), int_or_none(cs.get("port")) or 5432,
                      cs.get("user"), int_or_none(cs.get("pool_size")),
                      int_or_none(cs.get("reserve_pool") or cs.get("reserve_pool_size")),
                      int_or_none(cs.get("max_db_connections")),
                      mode.lower() if mode else None, cs.get("auth_user"),
                      int_or_none(cs.get("min_pool_size"))))
    return tuple(dbs)


@dataclass(frozen=True)
class Check:
    """What every offline rule reads: the configuration, its surroundings and the
    [databases] entries, each read once."""

    cfg: PgbConfig
    env: Environment
    lines: tuple[DbLine, ...]  # parsed [databases] entries
    dbs: tuple[Db, ...]  # the ones PgBouncer accepts

    @classmethod
    def of(cls, cfg: PgbConfig, env: Environment) -> Check:
        lines = database_lines(cfg)
        return cls(cfg, env, lines, usable_databases(lines, env.version))

    @property
    def v(self) -> Version:
        return self.env.version

    def value(self, key: str) -> str | None:
        """A [pgbouncer] setting as PgBouncer ends up with it (its default if unset)."""
        return self.cfg.value(key, self.env.version)

    def number(self, key: str, default: str) -> int:
        """A numeric setting as the sizing rules read it (0 when unreadable)."""
        return strtol(self.value(key) or default) or 0

    @property
    def auth_type(self) -> str:
        return (self.value("auth_type") or "md5").lower()

    @property
    def listeners(self) -> list[str]:
        return non_loopback_listeners(self.value("listen_addr"))

    @property
    def auth_file(self) -> AuthFile | None:
        """The parsed auth_file, if it was read."""
        return self.env.auth_file if isinstance(self.env.auth_file, AuthFile) else None

    @property
    def hba(self) -> HbaFile | None:
        """The parsed auth_hba_file, if it was read."""
        return self.env.hba_file if isinstance(self.env.hba_file, HbaFile) else None


@dataclass(frozen=True)
class LiveRows:
    """What the running pooler answered to one admin-console query, next to the file."""

    cfg: PgbConfig
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Backends:
    """The backends of the running pooler's databases that refused a connection."""

    cfg: PgbConfig
    failed: tuple[tuple[str, str, int, str], ...]  # (database, host, port, why)
