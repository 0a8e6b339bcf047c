"""`--live`: the file against the running pooler, and its backends' reachability.

The comparisons are pure (`compare_show_config`, `compare_show_databases`,
`backends_of` take rows as the admin console returns them); `live_findings` and
`postgres_limits` do the I/O: read SHOW CONFIG / SHOW DATABASES on the admin console,
try every backend of [databases] in parallel, read PostgreSQL's max_connections.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from typing import Any

from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.model import PgbConfig, strtol
from dbgauge.checks.pgbouncer.params import PARAMS, Param
from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.db.values import flag
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.result import Finding, Severity, finding
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
        restart = flag(row.get("changeable", "yes")) is False
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
    for (db, host, port), err in zip(backends, results, strict=True):
        if isinstance(err, Exception):
            raise err  # reachable() answers OSErrors itself; anything else is a bug
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
    conn = connect_dsn(dsn, password=password, kind="postgres")
    try:
        row = conn.query("max_connections")[0]
        return int(row["max_connections"]), int(row.get("reserved_connections") or 0)
    finally:
        conn.close()
