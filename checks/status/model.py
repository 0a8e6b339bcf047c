"""The topology `dbgauge status` shows: nodes, the links between them, and the documented
JSON document every rendering (text, HTML, /status.json) is made from."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dbgauge.toolkit.result import Finding, Status, worst

SCHEMA = "dbgauge.status/1"
# Link kinds: how `node` depends on `upstream`.
REPLICA, STANDBY, SUBSCRIBER, POOLER = "replica", "standby", "subscriber", "pooler"


@dataclass(frozen=True)
class NodeState:
    """One configured target as `status` saw it (None: not measured or not applicable)."""

    name: str
    kind: str  # mysql | postgres | pgbouncer
    address: str  # host:port from the DSN
    up: bool
    role: str  # primary, replica, standby, subscriber, pooler, standalone, unknown
    flavor: str = ""
    version: str = ""
    read_only: bool | None = None
    lag_seconds: float | None = None
    lag_bytes: float | None = None
    replication: str = ""  # threads (IO/SQL) or WAL receiver / apply worker state
    errant: bool = False  # split-brain: errant transactions, second primary, writable replica
    oldest_lock_wait_seconds: float | None = None
    oldest_transaction_seconds: float | None = None
    waiting_clients: float | None = None
    checksum: str | None = None  # the daemon's last checksum verdict for this node
    findings: tuple[Finding, ...] = ()

    @property
    def status(self) -> Status:
        return worst(f.severity for f in self.findings)


@dataclass(frozen=True)
class Link:
    """`node` depends on `upstream`: replicates or streams from it, or pools for it."""

    upstream: str
    node: str
    kind: str  # replica | standby | subscriber | pooler


@dataclass(frozen=True)
class Topology:
    """Every node, the links found between them, and when they were read."""

    nodes: tuple[NodeState, ...]
    links: tuple[Link, ...] = ()
    taken_at: float = field(default_factory=time.time)

    @property
    def status(self) -> Status:
        return worst(n.status for n in self.nodes)

    def node(self, name: str) -> NodeState | None:
        return next((n for n in self.nodes if n.name == name), None)

    def roots(self) -> list[str]:
        """Nodes at the top of a tree: linked, with no upstream, in config order (a tree
        whose top is not configured starts at its first node that is)."""
        linked = {x for link in self.links for x in (link.upstream, link.node)}
        below = {link.node for link in self.links}
        tops = [n.name for n in self.nodes if n.name in linked and n.name not in below]
        seen = set(_reach(tops, self.links))
        for n in self.nodes:  # a cycle (two nodes replicating from each other) has no top
            if n.name in linked and n.name not in seen:
                tops.append(n.name)
                seen |= set(_reach([n.name], self.links))
        return tops

    def apart(self) -> list[str]:
        """Nodes that fit no tree."""
        linked = {x for link in self.links for x in (link.upstream, link.node)}
        return [n.name for n in self.nodes if n.name not in linked]

    def tree(self, root: str) -> dict[str, Any]:
        """{"node", "link", "children"} from `root` down (a node is expanded once)."""
        seen: set[str] = set()

        def walk(name: str, kind: str | None) -> dict[str, Any]:
            first = name not in seen
            seen.add(name)
            children = [walk(link.node, link.kind) for link in self.links
                        if link.upstream == name] if first else []
            return {"node": name, "link": kind, "children": children}

        return walk(root, None)

    def doc(self) -> dict[str, Any]:
        """The JSON document (schema dbgauge.status/1, docs/status.md)."""
        status = self.status
        return {
            "schema": SCHEMA,
            "taken_at": datetime.fromtimestamp(self.taken_at, UTC).isoformat(
                timespec="seconds").replace("+00:00", "Z"),
            "status": status.name,
            "exit_code": int(status),
            "clusters": [self.tree(root) for root in self.roots()],
            "apart": self.apart(),
            "links": [{"upstream": link.upstream, "node": link.node, "kind": link.kind}
                      for link in self.links],
            "nodes": [node_doc(n) for n in self.nodes],
        }


def _reach(starts: Iterable[str], links: Sequence[Link]) -> list[str]:
    out, todo = [], list(starts)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.append(name)
        todo += [link.node for link in links if link.upstream == name]
    return out


def node_doc(n: NodeState) -> dict[str, Any]:
    return {
        "name": n.name, "kind": n.kind, "address": n.address, "status": n.status.name,
        "up": n.up, "role": n.role, "flavor": n.flavor, "version": n.version,
        "read_only": n.read_only, "lag_seconds": n.lag_seconds, "lag_bytes": n.lag_bytes,
        "replication": n.replication, "errant": n.errant,
        "oldest_lock_wait_seconds": n.oldest_lock_wait_seconds,
        "oldest_transaction_seconds": n.oldest_transaction_seconds,
        "waiting_clients": n.waiting_clients, "checksum": n.checksum,
        "findings": [{"severity": f.severity.name, "kind": f.kind, "detail": f.detail}
                     for f in n.findings],
    }
