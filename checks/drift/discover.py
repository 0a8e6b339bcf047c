"""--recursion-method: find a MySQL-family source's replicas when no --replica is given,
the ways pt-table-checksum does.

- `processlist`: the client hosts of the source's binlog dump threads. The processlist
  shows the replica's outgoing address, not the port it serves on: pt assumes the
  source's port; dbgauge tries the ports the replicas registered (SHOW SLAVE HOSTS, i.e.
  report_port) first, then the source's, and keeps the server that answers with another
  server_id (so a replica on the source's host and another port is found too).
- `hosts`: SHOW SLAVE HOSTS / SHOW REPLICAS (needs report_host on the replicas).
- `dsn=D=db,t=tbl`: pt's DSN table (id, parent_id, dsn) on the source, each `dsn` a pt
  DSN such as `h=10.0.0.2,P=3306` (u= and p= override the source's credentials).
- `none`: find nothing.

Methods are tried in the order given (pt's default: processlist,hosts) until one finds a
replica. Discovered replicas connect with the source's user and password. Replicas of
replicas are not followed.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack, closing
from dataclasses import replace
from urllib.parse import quote, urlsplit, urlunsplit

from dbgauge.checks.drift.model import DriftError, Reporter
from dbgauge.checks.drift.sides import Side
from dbgauge.checks.drift.sql import compose
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.db.privileges import require_process
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.dsn import parse_dsn, parse_pt_dsn
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.redact import redact_dsn
from dbgauge.toolkit.sql import quote_ident
from dbgauge.toolkit.targets import Target

METHODS = ("processlist", "hosts", "dsn", "none")
DEFAULT_METHODS = ("processlist", "hosts")


def parse_recursion_method(values: Sequence[str]) -> tuple[str, ...]:
    """`processlist,hosts` and `dsn=D=db,t=tbl` (the dsn's own commas kept) as a tuple."""
    out: list[str] = []
    for value in values:
        value = value.strip()
        head, _, rest = value.partition("dsn=")
        items = [i.strip() for i in head.split(",") if i.strip()]
        if rest:
            items.append("dsn=" + rest.strip())
        for item in items:
            if item.split("=", 1)[0] not in METHODS or (item == "dsn"):
                raise ConfigError(f"--recursion-method {item!r}: use processlist, hosts, "
                                  "dsn=D=db,t=tbl or none")
            if item.startswith("dsn="):
                dsn_table(item[4:])  # refuse a malformed one now
            out.append(item)
    return tuple(out)


def dsn_table(spec: str) -> tuple[str, str]:
    """dsn=D=db,t=tbl (or t=db.tbl) as (db, tbl); the table is read on the source."""
    parts = parse_pt_dsn(spec, f"--recursion-method dsn={spec}")
    table = parts.get("t", "")
    db = parts.get("D", "")
    if "." in table and not db:
        db, table = table.split(".", 1)
    if not db or not table:
        raise ConfigError(f"--recursion-method dsn={spec}: name the DSN table with D=db,t=tbl")
    if {"h", "P", "S"} & set(parts):
        raise ConfigError(f"--recursion-method dsn={spec}: the DSN table is read on the "
                          "source; drop h=/P=/S=")
    for ident in (db, table):
        try:
            quote_ident(ident, "mysql")
        except DbgaugeError as exc:
            raise ConfigError(f"--recursion-method dsn={spec}: {exc}") from None
    return db, table


def _with_address(source: Target, host: str, port: int, user: str | None = None,
                  password: str | None = None) -> Target:
    """`source` pointed at host:port (its credentials unless others are given)."""
    parts = urlsplit(source.dsn)
    userinfo = parts.netloc.rpartition("@")[0]
    if user is not None or password is not None:
        old = parse_dsn(source.dsn)
        userinfo = quote(user or old.user, safe="")
        if password is not None:
            userinfo += ":" + quote(password, safe="")
    shown = f"[{host}]" if ":" in host else host
    netloc = f"{userinfo}@{shown}:{port}" if userinfo else f"{shown}:{port}"
    dsn = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    target = replace(source, name=f"{host}:{port}", dsn=dsn, labels={})
    if password is not None:
        target = replace(target, password_env=None, password_file=None)
    return target


def _server_id(target: Target) -> int | None:
    """The server_id of target, or None when it does not answer."""
    try:
        with closing(connect(target, connect_timeout=min(target.connect_timeout, 3.0))) as c:
            return int(Side(target.name, c, "replica").q("checksum_server_id")[0]["server_id"])
    except DbgaugeError:
        return None


def _hosts_rows(side: Side) -> list[dict[str, object]]:
    try:
        rows = side.q("checksum_replica_hosts")
    except DbgaugeError:
        return []
    return [{str(k).lower(): v for k, v in r.items()} for r in rows]


def _by_processlist(source: Target, side: Side, source_id: int) -> list[Target]:
    require_process(side.conn, "checksum_binlog_dump_hosts")  # else only its own threads
    hosts = []
    for row in side.q("checksum_binlog_dump_hosts"):
        host = _text(row["host"]).rpartition(":")[0] or _text(row["host"])
        host = "127.0.0.1" if host == "localhost" else host.strip("[]")
        hosts.append(host)
    registered = _hosts_rows(side)
    ids = {int(str(r["server_id"])) for r in registered}
    ports = [int(str(r["port"])) for r in registered if int(str(r["port"]) or 0)]
    ports.append(parse_dsn(source.dsn).port)
    out: list[Target] = []
    seen: set[int] = set()
    for host in hosts:
        for port in dict.fromkeys(ports):
            candidate = _with_address(source, host, port)
            sid = _server_id(candidate)
            if sid is None or sid == source_id or sid in seen or (ids and sid not in ids):
                continue
            seen.add(sid)
            out.append(candidate)
            break
    return out


def _by_hosts(source: Target, side: Side) -> list[Target]:
    out = []
    for row in _hosts_rows(side):
        host = _text(row.get("host"))
        if host:
            out.append(_with_address(source, host, int(str(row["port"]))))
    return out


def _by_dsn_table(source: Target, side: Side, spec: str) -> list[Target]:
    db, table = dsn_table(spec)
    sql = compose(side.flavor, side.version, "checksum_dsn_table",
                  {"dsn_table": f"{quote_ident(db, 'mysql')}.{quote_ident(table, 'mysql')}"})
    try:
        rows = side.run((sql, ()))
    except DbgaugeError as exc:
        raise DriftError(f"--recursion-method dsn={spec}: cannot read {db}.{table}: {exc}"
                         ) from None
    source_port = parse_dsn(source.dsn).port
    out = []
    for row in rows:
        parts = parse_pt_dsn(_text(row["dsn"]), f"DSN table {db}.{table}, row "
                                                f"{redact_dsn(_text(row['dsn']))!r}")
        if "h" not in parts:
            raise ConfigError(f"DSN table {db}.{table}: a row has no h=host part")
        try:
            port = int(parts.get("P", source_port))
        except ValueError:
            raise ConfigError(f"DSN table {db}.{table}: P={parts['P']!r} is not a port"
                              ) from None
        out.append(_with_address(source, parts["h"], port, parts.get("u"), parts.get("p")))
    return out


def discover(source: Target, methods: Sequence[str], reporter: Reporter) -> list[Target]:
    """The replicas `methods` find for `source` (tried in order until one finds some)."""
    methods = tuple(methods) or DEFAULT_METHODS
    if methods == ("none",):
        raise ConfigError("--recursion-method none finds no replica: give --replica")
    if source.kind != "mysql":
        raise ConfigError(f"source {source.name} is PostgreSQL: --recursion-method finds "
                          "MySQL/MariaDB replicas only; give each --replica")
    with ExitStack() as stack:
        try:
            conn = connect(source)
        except DbgaugeError as exc:
            raise type(exc)(f"source {source.name}: {exc}") from None
        stack.callback(conn.close)
        side = Side(source.name, conn, "source")
        source_id = int(side.q("checksum_server_id")[0]["server_id"])
        failed: list[str] = []
        for method in methods:
            found: list[Target] = []
            try:
                if method == "processlist":
                    found = _by_processlist(source, side, source_id)
                elif method == "hosts":
                    found = _by_hosts(source, side)
                elif method.startswith("dsn="):
                    found = _by_dsn_table(source, side, method[4:])
            except DbgaugeError as exc:
                if len(methods) == 1 or isinstance(exc, ConfigError):
                    raise
                failed.append(f"{method}: {exc}")
            if found:
                reporter.note(f"replicas found by --recursion-method {method}: "
                              + ", ".join(t.name for t in found))
                return found
    raise DriftError(
        f"no replica of source {source.name} found by --recursion-method "
        f"{','.join(methods)} (processlist needs PROCESS to see the replicas' binlog dump "
        "threads and, on another port than the source's, SHOW SLAVE HOSTS; hosts needs "
        "report_host on the replicas"
        + "".join(f"; {f}" for f in failed)
        + "): give --replica, or list them in a DSN table and use --recursion-method "
        "dsn=D=db,t=tbl")
