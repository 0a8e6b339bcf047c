"""MySQL Router's mysqlrouter.conf against the members: routes, destinations, ports.

Every `[routing:*]` section needs destinations that exist (a metadata cache the file
defines, or members' addresses) and a port of its own that no member's server uses.
Pure: the file is read by `run.load_cnf` and laid beside the members by `routerconf`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from dbgauge.checks.innodb_cluster.model import Member, Out
from dbgauge.checks.innodb_cluster.mycnf import CnfFile, CnfOption, as_int
from dbgauge.checks.innodb_cluster.routerconf import RouterConf, RouterSection
from dbgauge.checks.innodb_cluster.rules import ROUTER
from dbgauge.toolkit.result import Finding, Severity

CACHE_SCHEME = "metadata-cache://"


def check_router(cnf: CnfFile, members: Sequence[Member]) -> list[Finding]:
    """Routing sections name the members; RW/RO ports are distinct and free."""
    return ROUTER.findings(RouterConf.of(cnf, members), Out)


def _at(out: Out, r: RouterConf, sev: Severity, msg: str, line: int | None,
        key: str | None = None, fix: str | None = None) -> None:
    out.emit(sev, msg, node=r.main, file=r.main, line=line, key=key, fix=fix)


def _destinations(r: RouterConf) -> Iterator[tuple[RouterSection, CnfOption]]:
    """(section, destinations) of every routing section that has destinations."""
    for s in r.routing:
        dest = s.options.get("destinations")
        if dest is not None and dest.value:
            yield s, dest


def _ports(r: RouterConf) -> Iterator[tuple[RouterSection, int, int]]:
    """(section, bind_port, its line) of every routing section with a bind_port."""
    for s in r.routing:
        opt = s.options.get("bind_port")
        port = as_int(opt.value) if opt else None
        if opt is not None and port is not None:
            yield s, port, opt.line


def _routing_role(s: RouterSection) -> str | None:
    dest = (s.options["destinations"].value or "") if "destinations" in s.options else ""
    m = re.search(r"role=([A-Z_]+)", dest, re.IGNORECASE)
    if m:
        return "rw" if m.group(1).upper() == "PRIMARY" else "ro"
    mode = s.options.get("mode")
    if mode and mode.value:
        return "rw" if mode.value.lower() == "read-write" else "ro"
    return None


@ROUTER.rule("router/config", "MySQL Router routing configuration")
def unreadable_router_line(r: RouterConf, out: Out) -> None:
    """A line of mysqlrouter.conf that cannot be read."""
    for p in r.cnf.problems:
        _at(out, r, Severity.ERROR if p.fatal else Severity.WARNING, p.message, p.line)


@ROUTER.rule("router/config")
def no_routing_section(r: RouterConf, out: Out) -> None:
    """No [routing:...] section: Router routes nothing."""
    if not r.routing:
        _at(out, r, Severity.ERROR, "no [routing:...] section: Router routes nothing", 1)


@ROUTER.rule("router/config")
def no_destinations(r: RouterConf, out: Out) -> None:
    """A routing section without destinations."""
    for s in r.routing:
        dest = s.options.get("destinations")
        if dest is None or not dest.value:
            _at(out, r, Severity.ERROR, f"[{s.name}] has no destinations", s.line,
                "destinations")


@ROUTER.rule("router/config")
def unknown_metadata_cache(r: RouterConf, out: Out) -> None:
    """metadata-cache://NAME/ that no [metadata_cache] section (or its metadata_cluster)
    defines."""
    caches, clusters = r.caches, r.cache_clusters
    for s, dest in _destinations(r):
        if not dest.value or not dest.value.startswith(CACHE_SCHEME):
            continue
        cluster = dest.value[len(CACHE_SCHEME):].split("/", 1)[0].lower()
        if cluster not in caches and cluster not in clusters:
            _at(out, r, Severity.ERROR, f"[{s.name}] routes to metadata cache {cluster!r}, "
                "but no [metadata_cache] section defines it", dest.line, "destinations",
                "run mysqlrouter --bootstrap again, or fix the cluster name")


@ROUTER.rule("router/config")
def destination_not_member(r: RouterConf, out: Out) -> None:
    """A static destination that is not a member's address."""
    if not r.members or not r.member_addrs:
        return
    for s, dest in _destinations(r):
        if not dest.value or dest.value.startswith(CACHE_SCHEME):
            continue
        for d in (x.strip() for x in dest.value.split(",") if x.strip()):
            if (d if ":" in d else f"{d}:3306").lower() not in r.member_addrs:
                _at(out, r, Severity.ERROR, f"[{s.name}] destination {d} is not a member "
                    f"({', '.join(sorted(r.member_addrs))})", dest.line, "destinations")


@ROUTER.rule("router/config")
def no_bind_port(r: RouterConf, out: Out) -> None:
    """A routing section with neither bind_port nor socket."""
    for s in r.routing:
        opt = s.options.get("bind_port")
        if (opt is None or as_int(opt.value) is None) and "socket" not in s.options:
            _at(out, r, Severity.ERROR, f"[{s.name}] has no bind_port", s.line, "bind_port")


@ROUTER.rule("router/config")
def bind_port_reused(r: RouterConf, out: Out) -> None:
    """Two routing sections on one bind_port."""
    first: dict[int, RouterSection] = {}
    for s, port, line in _ports(r):
        if port in first:
            _at(out, r, Severity.ERROR, f"[{s.name}] bind_port {port} is also used by "
                f"[{first[port].name}]", line, "bind_port",
                "read-write and read-only routes need their own ports (6446/6447)")
        first.setdefault(port, s)


@ROUTER.rule("router/config")
def bind_port_of_member(r: RouterConf, out: Out) -> None:
    """A bind_port a member's server already uses (classic, report, GR local or X port)."""
    for s, port, line in _ports(r):
        if port in r.member_ports:
            _at(out, r, Severity.WARNING, f"[{s.name}] bind_port {port} is the "
                f"{r.member_ports[port]}: Router cannot bind it on a host that also runs "
                "that server", line, "bind_port")


@ROUTER.rule("router/config")
def unconventional_port(r: RouterConf, out: Out) -> None:
    """RW traffic on 6447 or RO traffic on 6446, the other role's conventional port."""
    for s, port, line in _ports(r):
        role = _routing_role(s)
        if (role == "rw" and port == 6447) or (role == "ro" and port == 6446):
            _at(out, r, Severity.WARNING, f"[{s.name}] routes {role.upper()} traffic on "
                f"{port}, the conventional {'read-only' if port == 6447 else 'read-write'} "
                "port", line, "bind_port", "RW on 6446, RO on 6447 (classic protocol)")


@ROUTER.rule("router/config")
def bootstrap_server_not_member(r: RouterConf, out: Out) -> None:
    """A metadata cache's bootstrap_server_addresses entry that is not a member."""
    for name, s in r.caches.items():
        servers = s.options.get("bootstrap_server_addresses")
        if not (servers and servers.value and r.member_addrs):
            continue
        for addr in servers.value.split(","):
            a = addr.strip().removeprefix("mysql://").lower()
            if a and a not in r.member_addrs:
                _at(out, r, Severity.ERROR, f"[metadata_cache:{name}] bootstrap server {a} is "
                    "not a member", servers.line, "bootstrap_server_addresses")
