"""`--live`: the file against the running pooler, and its backends' reachability.

The comparisons are pure (`compare_show_config`, `compare_show_databases`,
`backends_of` take rows as the admin console returns them); `live_findings` and
`postgres_limits` do the I/O: read SHOW CONFIG / SHOW DATABASES on the admin console,
try every backend of [databases] in parallel, read PostgreSQL's max_connections.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.ini import Entry
from dbgauge.checks.pgbouncer.model import Backends, LiveRows, Out, PgbConfig, strtol
from dbgauge.checks.pgbouncer.params import PARAMS, Param
from dbgauge.checks.pgbouncer.rules import BACKENDS, SHOW_CONFIG, SHOW_DATABASES
from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.db.values import flag
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.result import Finding, Severity
from dbgauge.toolkit.targets import fan_out


def _normalize(param: Param | None, value: Any) -> Any:
    """A value as its parameter's type compares it, so '0x1F' equals '31' and '30.0' '30'."""
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


@dataclass(frozen=True)
class _Difference:
    """A SHOW CONFIG key whose running value is not what the file (or the default) says."""

    key: str
    running: Any
    shown: Any  # the file's value, or "<default> (default)"
    entry: Entry | None
    restart: bool  # changeable = no: RELOAD keeps the running value


def _differences(x: LiveRows) -> Iterator[_Difference]:
    for row in x.rows:
        key = str(row.get("key"))
        entry = x.cfg.settings.get(key)
        if key in _NOT_COMPARED or (entry is None and "default" not in row):
            continue
        expected_raw = entry.value if entry is not None else row.get("default")
        param = PARAMS.get(key)
        if _normalize(param, expected_raw) == _normalize(param, row.get("value")):
            continue
        shown = expected_raw if entry is not None else f"{expected_raw} (default)"
        yield _Difference(key, row.get("value"), shown, entry,
                          flag(row.get("changeable", "yes")) is False)


@SHOW_CONFIG.rule("pgbouncer/drift", "Running value differs from the file (RELOAD pending)")
def reload_pending(x: LiveRows, out: Out) -> None:
    """A reloadable key whose running value differs from the file: RELOAD pending."""
    for d in _differences(x):
        if not d.restart:
            out.add(Severity.WARNING, f"running value {d.running!r}, file says {d.shown!r}",
                    file=d.entry.source if d.entry else None,
                    line=d.entry.line if d.entry else None, key=d.key,
                    fix="run RELOAD on the admin console (or SIGHUP) if the file is what "
                        "you want")


@SHOW_CONFIG.rule("pgbouncer/restart-pending",
                  "Restart-only key differs from the file (restart pending)")
def restart_pending(x: LiveRows, out: Out) -> None:
    """A restart-only key (changeable = no) that differs: RELOAD keeps the running value."""
    for d in _differences(x):
        if d.restart:
            out.add(Severity.WARNING, f"running value {d.running!r}, file says {d.shown!r}: "
                    "restart-only key, RELOAD keeps the running value",
                    file=d.entry.source if d.entry else None,
                    line=d.entry.line if d.entry else None, key=d.key,
                    fix="restart PgBouncer (or `pgbouncer -R` / so_reuseport rolling restart)")


def compare_show_config(cfg: PgbConfig, rows: Iterable[Mapping[str, Any]],
                        node: str) -> list[Finding]:
    """File vs `SHOW CONFIG`: drift (RELOAD pending) or restart-only keys that differ."""
    return SHOW_CONFIG.findings(LiveRows(cfg, tuple(rows)), Out.live(cfg, node))


def _running(x: LiveRows) -> dict[str, Mapping[str, Any]]:
    return {str(r.get("name")): r for r in x.rows}


def _file_databases(x: LiveRows) -> Iterator[tuple[str, Entry]]:
    return ((name, e) for name, e in x.cfg.databases.items() if name not in ("*", "pgbouncer"))


@SHOW_DATABASES.rule("pgbouncer/live-databases",
                     "Databases in the running pooler differ from the file")
def database_not_running(x: LiveRows, out: Out) -> None:
    """A database of the file the running pooler does not serve (RELOAD pending)."""
    running = _running(x)
    for name, e in _file_databases(x):
        if name not in running:
            out.add(Severity.WARNING, f"database {name!r} is in the file but not in the "
                    "running pooler", file=e.source, line=e.line, key=name, fix="RELOAD")


@SHOW_DATABASES.rule("pgbouncer/live-databases")
def database_differs(x: LiveRows, out: Out) -> None:
    """A database the pooler serves with another host, port or database name."""
    running = _running(x)
    for name, e in _file_databases(x):
        row, cs = running.get(name), parse_connstr(e.value)
        if row is None or cs.error:
            continue
        want = {"host": cs.get("host"), "port": cs.get("port") or "5432",
                "database": cs.get("dbname") or name}
        for col, val in want.items():
            have = row.get(col)
            if (str(have) if have is not None else None) != val:
                out.add(Severity.WARNING, f"database {name!r}: running {col} {have!r}, file "
                        f"says {val!r}", file=e.source, line=e.line, key=name, fix="RELOAD")


@SHOW_DATABASES.rule("pgbouncer/live-databases")
def database_only_running(x: LiveRows, out: Out) -> None:
    """A database the pooler still serves that the file no longer has (without `*`)."""
    if "*" in x.cfg.databases:
        return  # the running ones may be auto-created from the fallback entry
    for name in _running(x):
        if name != "pgbouncer" and name not in x.cfg.databases:
            out.add(Severity.WARNING, f"database {name!r} is served by the running pooler "
                    "but no longer in the file", key=name,
                    fix="RELOAD drops it (clients connected to it are kept)")


def compare_show_databases(cfg: PgbConfig, rows: Iterable[Mapping[str, Any]],
                           node: str) -> list[Finding]:
    """[databases] of the file vs `SHOW DATABASES` of the running pooler."""
    return SHOW_DATABASES.findings(LiveRows(cfg, tuple(rows)), Out.live(cfg, node))


def backends_of(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, int]]:
    """(database, host, port) of each SHOW DATABASES row that has a TCP or socket host."""
    out = []
    for r in rows:
        if r.get("name") == "pgbouncer" or not r.get("host"):
            continue
        for host in str(r["host"]).split(","):
            out.append((str(r["name"]), host.strip(), int(r.get("port") or 5432)))
    return out


def reachable(host: str, port: int, timeout: float) -> str | None:
    """None if the backend accepts a connection (or its Unix socket exists), else why not."""
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
    results = fan_out(backends, lambda b: reachable(b[1], b[2], timeout), max_workers=16,
                      name="pgbouncer-backends")
    failed = []
    for (db, host, port), err in zip(backends, results, strict=True):
        if isinstance(err, Exception):
            raise err  # reachable() answers OSErrors itself; anything else is a bug
        if err:
            failed.append((db, host, port, err))
    findings += BACKENDS.findings(Backends(cfg, tuple(failed)), Out.live(cfg, node))
    return version, findings


@BACKENDS.rule("pgbouncer/unreachable",
               "Backend server of a database does not accept connections")
def backend_unreachable(x: Backends, out: Out) -> None:
    """A backend the running pooler lists that does not accept a TCP connection (or has
    no Unix socket)."""
    for db, host, port, err in x.failed:
        e = x.cfg.databases.get(db)
        out.add(Severity.ERROR, f"database {db!r}: backend {host}:{port} does not accept "
                f"connections ({err})", file=e.source if e else None,
                line=e.line if e else None, key=db,
                fix="check the server, the host/port in [databases], and firewalls between "
                    "PgBouncer and PostgreSQL")


def postgres_limits(dsn: str, password: str | None = None) -> tuple[int, int]:
    """max_connections and the slots a pooler's (ordinary) role cannot take: the
    superuser-reserved ones and, on PostgreSQL 16+, reserved_connections."""
    conn = connect_dsn(dsn, password=password, kind="postgres")
    try:
        row = conn.query("max_connections")[0]
        return int(row["max_connections"]), int(row.get("reserved_connections") or 0) + int(
            row.get("role_reserved_connections") or 0)
    finally:
        conn.close()
