"""mysqlrouter.conf as the router rules read it: its sections next to the members.

mysqlrouter.conf is an INI file close enough to my.cnf that `mycnf` reads it; its
sections become `RouterSection`s, and `RouterConf` puts them beside the members'
addresses and ports. Pure: the file is read by `run.load_cnf`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbgauge.checks.innodb_cluster.model import Member, port_of
from dbgauge.checks.innodb_cluster.mycnf import CnfFile, CnfOption, as_int


@dataclass(frozen=True)
class RouterSection:
    """One [section] of mysqlrouter.conf: its options by name and its header line."""

    name: str
    options: Mapping[str, CnfOption]
    line: int

    @property
    def kind(self) -> str:
        """routing, metadata_cache, ...: the part before the ':'."""
        return self.name.split(":")[0]


def router_sections(cnf: CnfFile) -> list[RouterSection]:
    sections: dict[str, dict[str, CnfOption]] = {}
    lines: dict[str, int] = {}
    for g in cnf.groups:
        sections.setdefault(g.name, {})
        lines.setdefault(g.name, g.line)
    for o in cnf.options:
        sections.setdefault(o.group or "", {})[o.name] = o
    return [RouterSection(n, opts, lines.get(n, 0)) for n, opts in sections.items()]


def _member_ports(members: Sequence[Member]) -> dict[int, str]:
    """Every port a member's server listens on (classic, report, GR local, X), and whose."""
    ports: dict[int, str] = {}
    for m in members:
        ports.setdefault(m.port, f"port of {m.label}")
        rp = as_int(m.text("report_port"))
        if rp:
            ports.setdefault(rp, f"report_port of {m.label}")
        local = port_of(m.text("group_replication_local_address") or "")
        if local:
            ports.setdefault(local, f"group_replication_local_address of {m.label}")
        ports.setdefault(as_int(m.text("mysqlx_port")) or 33060, f"X protocol port of {m.label}")
    return ports


@dataclass(frozen=True)
class RouterConf:
    """A mysqlrouter.conf and the members it should route to."""

    cnf: CnfFile
    sections: tuple[RouterSection, ...]
    members: tuple[Member, ...]
    member_addrs: frozenset[str]  # report addresses, lower case
    member_ports: Mapping[int, str]  # port -> whose it is

    @classmethod
    def of(cls, cnf: CnfFile, members: Sequence[Member]) -> RouterConf:
        addrs = frozenset(a.lower() for m in members if (a := m.address))
        return cls(cnf, tuple(router_sections(cnf)), tuple(members), addrs,
                   _member_ports(members))

    @property
    def main(self) -> str:
        return self.cnf.main

    @property
    def caches(self) -> dict[str, RouterSection]:
        """[metadata_cache:NAME] sections by NAME."""
        return {s.name.split(":", 1)[1] if ":" in s.name else "": s for s in self.sections
                if s.kind == "metadata_cache"}

    @property
    def cache_clusters(self) -> set[str]:
        """The metadata_cluster names the cache sections name, lower case."""
        return {(s.options["metadata_cluster"].value or "").lower()
                for s in self.caches.values() if "metadata_cluster" in s.options}

    @property
    def routing(self) -> list[RouterSection]:
        return [s for s in self.sections if s.kind == "routing"]
