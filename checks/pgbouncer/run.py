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
import resource
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checks.pgbouncer.authfile import parse_auth_file
from checks.pgbouncer.check import check_pgbouncer
from checks.pgbouncer.hba import parse_hba
from checks.pgbouncer.ini import flatten, parse_pgbouncer_ini
from checks.pgbouncer.live import live_findings, postgres_limits
from checks.pgbouncer.model import PATH_KEYS, Environment, PgbConfig, build_config
from checks.pgbouncer.params import KNOWN_VERSIONS, LATEST
from toolkit.db.version import Version, version_text
from toolkit.errors import CheckFailed
from toolkit.result import CheckResult, Finding, config_result

NAME = "validate pgbouncer"


def _read_text(path: Path) -> str:
    """A file's text; bytes that are not UTF-8 are replaced, not fatal."""
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
    for key in PATH_KEYS:
        value = cfg.value(key, version)
        if value and os.access(resolve(value), os.R_OK):
            existing.add(resolve(value))
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
        existing_paths=frozenset(existing), resolve=resolve)


@dataclass(frozen=True)
class PgbouncerOptions:
    """What the command line adds to the file: version, live DSNs, limits, password."""

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
