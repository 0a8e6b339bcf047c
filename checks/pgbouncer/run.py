"""The whole `dbgauge validate pgbouncer`: read the files, run the check, go live if asked.

PgBouncer has no check mode: a bad file shows up when the pooler refuses to start, or
worse, when RELOAD silently keeps the old value of a restart-only key. This module does
the offline I/O (the main file and its `%include`s, the auth_file and HBA file it points
at, which TLS and other paths exist, the open-files limit) and hands the pure check
(`check.check_pgbouncer`) a `PgbConfig` and an `Environment`; with `--live` it adds the
comparison with the running pooler (`live`).
"""

from __future__ import annotations

import os
import re
import resource
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbgauge.checks.pgbouncer.authfile import parse_auth_file
from dbgauge.checks.pgbouncer.check import check_pgbouncer
from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.hba import parse_hba
from dbgauge.checks.pgbouncer.ini import Entry, Include, flatten, parse_pgbouncer_ini
from dbgauge.checks.pgbouncer.live import live_findings, postgres_limits
from dbgauge.checks.pgbouncer.model import (
    PATH_KEYS,
    READ_KEYS,
    Environment,
    PgbConfig,
    build_config,
)
from dbgauge.checks.pgbouncer.params import KNOWN_VERSIONS, LATEST
from dbgauge.checks.validation import refuse_long_numbers
from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.files import read_text
from dbgauge.toolkit.result import CheckResult, Finding, config_result

NAME = "validate pgbouncer"
MAX_INI_BYTES = 4 << 20  # 4 MiB: a pgbouncer.ini with 10,000 databases is about 1 MiB
MAX_AUX_BYTES = 16 << 20  # auth_file / HBA file: 100,000 SCRAM users fit


@dataclass(frozen=True)
class Where:
    """Where the files a configuration names are looked for: relative paths next to the
    config, absolute ones on this host or, with --root, under that directory."""

    base: Path
    root: Path | None = None

    def resolve(self, path: str) -> str:
        if os.path.isabs(path):
            if self.root is None:
                return os.path.normpath(path)
            return os.path.normpath(os.path.join(self.root, path.lstrip("/")))
        return os.path.normpath(self.base / os.path.expanduser(path))

    def not_here(self, path: str, resolved: str) -> bool:
        """An absolute path absent here (or under --root, which may be a partial copy):
        it belongs to the config's own host, so there is nothing to judge. A relative
        path is the config's own bundle: absent next to it is a finding."""
        return os.path.isabs(path) and not os.path.lexists(resolved)


def _read(path: str, what: str, limit: int, named_by: str, line: int | None) -> str:
    """A file a configuration names: anything but a readable regular UTF-8 file of
    sensible size stops the run with one error at the line that names it."""
    try:
        return read_text(path, what, limit)
    except ConfigError as exc:
        raise ConfigError(f"{what} {path}: {exc.detail}"
                          + (f" (line {exc.line})" if exc.line else ""),
                          source=named_by, line=line) from None


def load_config(path: str, root: str | None = None) -> PgbConfig:
    """Read and flatten the main file and its includes (ConfigError if unreadable)."""
    path = os.path.normpath(path)
    text = read_text(path, "pgbouncer.ini", MAX_INI_BYTES)
    where = Where(Path(path).parent, Path(root) if root else None)

    def resolve(inc: Include) -> tuple[str, str] | str:
        target = Where(Path(inc.source).parent, where.root).resolve(inc.path)
        if not os.path.lexists(target):
            return f"{target} not found: PgBouncer refuses to start"
        return _read(target, "%include", MAX_INI_BYTES, inc.source, inc.line), target

    flat = flatten(parse_pgbouncer_ini(text, path), resolve)
    stop = next((p for p in flat.problems if p.unreadable), None)
    if stop is not None:
        raise ConfigError(stop.message, source=stop.source, line=stop.line)
    refuse_long_numbers(_numbers(flat.entries))
    return build_config(path, flat)


def _numbers(entries: tuple[Entry, ...]) -> Iterator[tuple[str, str, str, int]]:
    """Every value a rule may read as a number: settings, connection-string values, ids."""
    for e in entries:
        yield e.key, e.key, e.source, e.line
        if e.section in ("databases", "users", "peers"):
            for k, v in parse_connstr(e.value).pairs:
                yield f"{e.key}: {k}", v, e.source, e.line
        else:
            yield e.key, e.value, e.source, e.line


def environment_for(cfg: PgbConfig, version: Version, *, max_connections: int | None = None,
                    reserved_connections: int = 0, fd_limit: int | None = None,
                    root: str | None = None) -> Environment:
    """Read the files the configuration points at: relative paths next to it, absolute
    ones on this host (or under `root`); absent absolute ones are "not available here"."""
    where = Where(Path(cfg.main).parent, Path(root) if root else None)
    not_here: dict[str, str] = {}
    read_from: dict[str, str] = {}

    def read(key: str, parse: Callable[[str, str], Any]) -> Any:
        value = cfg.value(key, version)
        if not value:
            return None
        target = where.resolve(value)
        if where.not_here(value, target):
            return None
        if not os.path.lexists(target):
            return "not found"
        read_from[key] = target
        return parse(_read(target, key, MAX_AUX_BYTES, cfg.source_of(key), cfg.line_of(key)),
                     target)

    auth_type = (cfg.value("auth_type", version) or "").lower()
    existing = set()
    for key in PATH_KEYS:
        value = cfg.value(key, version)
        if not value:
            continue
        target = where.resolve(value)
        if where.not_here(value, target):
            if key in READ_KEYS and key in cfg.settings:
                not_here[key] = value
        elif os.access(target, os.R_OK):
            existing.add(target)
    fd_source = "--fd-limit"
    if fd_limit is None:
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
        existing_paths=frozenset(existing), resolve=where.resolve,
        not_here=tuple(sorted(not_here.items())), read_from=tuple(sorted(read_from.items())),
        root=root)


@dataclass(frozen=True)
class PgbouncerOptions:
    """What the command line adds to the file: version, live DSNs, limits, password."""

    version: Version | None = None  # None: the live server's, else `installed`, else latest
    installed: Version | None = None  # the pgbouncer on this machine (installed_version())
    live_dsn: str | None = None
    postgres_dsn: str | None = None
    max_connections: int | None = None
    reserved_connections: int = 0
    fd_limit: int | None = None
    password: str | None = None
    root: str | None = None  # absolute paths of the config are looked up under this


def installed_version() -> Version | None:
    """The version of the pgbouncer binary on PATH (`pgbouncer --version`), None without
    one: a file validated on the pooler's host is for that version."""
    import shutil
    import subprocess

    binary = shutil.which("pgbouncer")
    if binary is None:
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"PgBouncer (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def chosen_version(opts: PgbouncerOptions, live: Version | None) -> tuple[Version, str]:
    """The parameter table to check against, and where its version came from (said in the
    result): --pgbouncer-version, else the live pooler's, else the installed pgbouncer's,
    else the latest known. A version outside the table is its nearest end."""
    for version, source in ((opts.version, "--pgbouncer-version"),
                            (live, "the live pooler's version"),
                            (opts.installed, "the installed pgbouncer's version")):
        if version is not None:
            near = version if version in KNOWN_VERSIONS else (
                LATEST if version > LATEST else KNOWN_VERSIONS[0])
            return near, source
    return LATEST, "the latest known; set --pgbouncer-version"


def validate_pgbouncer(path: str, opts: PgbouncerOptions) -> CheckResult:
    """The whole `dbgauge validate pgbouncer`: offline checks, then the live ones."""
    cfg = load_config(path, opts.root)
    findings: list[Finding] = []
    live_version = None
    if opts.live_dsn:
        live_version, live = live_findings(cfg, opts.live_dsn, password=opts.password)
        findings += live
    version, source = chosen_version(opts, live_version)
    max_conn, reserved = opts.max_connections, opts.reserved_connections
    if opts.postgres_dsn:
        max_conn, reserved = postgres_limits(opts.postgres_dsn, opts.password)
    env = environment_for(cfg, version, max_connections=max_conn,
                          reserved_connections=reserved, fd_limit=opts.fd_limit,
                          root=opts.root)
    findings = check_pgbouncer(cfg, env) + findings
    return config_result(f"{NAME} {path} (PgBouncer {version_text(version)} parameter table: "
                         f"{source})", findings)
