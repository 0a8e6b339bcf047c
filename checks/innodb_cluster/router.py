"""MySQL Router's mysqlrouter.conf against the members: routes, destinations, ports.

mysqlrouter.conf is an INI file close enough to my.cnf that `mycnf` reads it; its
sections become `RouterSection`s and `check_router` compares them with the members'
addresses and ports. Pure: the file is read by `run.load_cnf`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbgauge.checks.innodb_cluster.model import Member, port_of
from dbgauge.checks.innodb_cluster.mycnf import CnfFile, CnfOption, as_int
from dbgauge.toolkit.result import Finding, Severity, finding


@dataclass(frozen=True)
class RouterSection:
    """One [section] of mysqlrouter.conf: its options by name and its header line."""

    name: str
    options: Mapping[str, CnfOption]
    line: int


def router_sections(cnf: CnfFile) -> list[RouterSection]:
    sections: dict[str, dict[str, CnfOption]] = {}
    lines: dict[str, int] = {}
    for g in cnf.groups:
        sections.setdefault(g.name, {})
        lines.setdefault(g.name, g.line)
    for o in cnf.options:
        sections.setdefault(o.group or "", {})[o.name] = o
    return [RouterSection(n, opts, lines.get(n, 0)) for n, opts in sections.items()]


def check_router(cnf: CnfFile, members: Sequence[Member]) -> list[Finding]:
    """Routing sections name the members; RW/RO ports are distinct and free."""
    out: list[Finding] = []

    def add(sev: Severity, msg: str, line: int | None, key: str | None = None,
            fix: str | None = None) -> None:
        out.append(finding(sev, "router/config", msg, node=cnf.main, file=cnf.main,
                           line=line, key=key, fix=fix))

    for p in cnf.problems:
        add(Severity.ERROR if p.fatal else Severity.WARNING, p.message, p.line)
    sections = router_sections(cnf)
    caches = {s.name.split(":", 1)[1] if ":" in s.name else "": s for s in sections
              if s.name.split(":")[0] == "metadata_cache"}
    cache_clusters = {(s.options["metadata_cluster"].value or "").lower(): s
                      for s in caches.values() if "metadata_cluster" in s.options}
    routing = [s for s in sections if s.name.split(":")[0] == "routing"]
    if not routing:
        add(Severity.ERROR, "no [routing:...] section: Router routes nothing", 1)
    member_addrs = {a.lower() for m in members if (a := m.address)}
    member_ports: dict[int, str] = {}
    for m in members:
        member_ports.setdefault(m.port, f"port of {m.label}")
        rp = as_int(m.text("report_port"))
        if rp:
            member_ports.setdefault(rp, f"report_port of {m.label}")
        local = port_of(m.text("group_replication_local_address") or "")
        if local:
            member_ports.setdefault(local, f"group_replication_local_address of {m.label}")
        member_ports.setdefault(as_int(m.text("mysqlx_port")) or 33060,
                                f"X protocol port of {m.label}")
    ports: dict[int, RouterSection] = {}
    for s in routing:
        dest = s.options.get("destinations")
        port_opt = s.options.get("bind_port")
        role = _routing_role(s)
        if dest is None or not dest.value:
            add(Severity.ERROR, f"[{s.name}] has no destinations", s.line, "destinations")
        elif dest.value.startswith("metadata-cache://"):
            cluster = dest.value[len("metadata-cache://"):].split("/", 1)[0].lower()
            if cluster not in caches and cluster not in cache_clusters:
                add(Severity.ERROR, f"[{s.name}] routes to metadata cache {cluster!r}, but "
                    "no [metadata_cache] section defines it", dest.line, "destinations",
                    "run mysqlrouter --bootstrap again, or fix the cluster name")
        else:
            for d in (x.strip() for x in dest.value.split(",") if x.strip()):
                addr = d if ":" in d else f"{d}:3306"
                if members and member_addrs and addr.lower() not in member_addrs:
                    add(Severity.ERROR, f"[{s.name}] destination {d} is not a member "
                        f"({', '.join(sorted(member_addrs))})", dest.line, "destinations")
        port = as_int(port_opt.value) if port_opt else None
        if port is None:
            if "socket" not in s.options:
                add(Severity.ERROR, f"[{s.name}] has no bind_port", s.line, "bind_port")
            continue
        line = port_opt.line if port_opt else s.line
        if port in ports:
            add(Severity.ERROR, f"[{s.name}] bind_port {port} is also used by "
                f"[{ports[port].name}]", line, "bind_port",
                "read-write and read-only routes need their own ports (6446/6447)")
        ports.setdefault(port, s)
        if port in member_ports:
            add(Severity.WARNING, f"[{s.name}] bind_port {port} is the {member_ports[port]}: "
                "Router cannot bind it on a host that also runs that server", line,
                "bind_port")
        if (role == "rw" and port == 6447) or (role == "ro" and port == 6446):
            add(Severity.WARNING, f"[{s.name}] routes {role.upper()} traffic on {port}, the "
                f"conventional {'read-only' if port == 6447 else 'read-write'} port",
                line, "bind_port", "RW on 6446, RO on 6447 (classic protocol)")
    for name, s in caches.items():
        servers = s.options.get("bootstrap_server_addresses")
        if servers and servers.value and member_addrs:
            for addr in servers.value.split(","):
                a = addr.strip().removeprefix("mysql://").lower()
                if a and a not in member_addrs:
                    add(Severity.ERROR, f"[metadata_cache:{name}] bootstrap server {a} is "
                        "not a member", servers.line, "bootstrap_server_addresses")
    return out


def _routing_role(s: RouterSection) -> str | None:
    dest = (s.options["destinations"].value or "") if "destinations" in s.options else ""
    m = re.search(r"role=([A-Z_]+)", dest, re.IGNORECASE)
    if m:
        return "rw" if m.group(1).upper() == "PRIMARY" else "ro"
    mode = s.options.get("mode")
    if mode and mode.value:
        return "rw" if mode.value.lower() == "read-write" else "ro"
    return None
