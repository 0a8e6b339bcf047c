"""The discovery `dbgauge status` and the daemon's page run: every configured target read
in parallel (one connection each), the split-brain check over the reachable ones, then
the pure linking. A node that cannot be reached is down (CRITICAL) and keeps its place
in the tree it had in `previous` (the last discovery of a watch or of the daemon)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dbgauge.checks.nodes import AUTH_FAILED, UNREACHABLE, Failed, each_node
from dbgauge.checks.split_brain.model import (
    APPLIES_TO,
    ERRANT,
    PRIMARIES,
    TIMELINE,
    WRITABLE_REPLICA,
    Address,
)
from dbgauge.checks.split_brain.run import check_split_brain
from dbgauge.checks.status.model import NodeState, Topology
from dbgauge.checks.status.reads import Hints, down, read_node
from dbgauge.checks.status.topology import find_links, kept_links, with_roles
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.result import Finding
from dbgauge.toolkit.targets import Selection, Target

SPLIT_BRAIN = frozenset({ERRANT, WRITABLE_REPLICA, PRIMARIES, TIMELINE})


def _address(node: Target) -> Address:
    params = parse_dsn(node.dsn)
    return params.host, params.port


def discover(targets: Sequence[Target], previous: Topology | None = None) -> Topology:
    """Read every target, link them, and judge each node."""
    before = {n.name: n for n in previous.nodes} if previous else {}
    states: list[NodeState] = []
    hints: dict[str, Hints] = {}
    read = each_node(targets, lambda node, conn: read_node(node, conn, _address(node)))
    for node, got in zip(targets, read, strict=True):
        if isinstance(got, Failed):
            states.append(_not_read(node, got, before))
        else:
            states.append(got[0])
            hints[node.name] = got[1]
    states = _split_brain(targets, states, hints)
    links = find_links(states, hints)
    if previous is not None:
        gone = {n.name for n in states if not n.up}
        links += kept_links(previous.links, gone, links)
    return Topology(tuple(with_roles(states, links)), tuple(links))


def _not_read(node: Target, failed: Failed, before: dict[str, NodeState]) -> NodeState:
    """A node that could not be reached is down (CRITICAL); one reached whose reads failed
    is UNKNOWN."""
    address = _address(node)
    if not failed.connected and failed.finding.kind in (UNREACHABLE, AUTH_FAILED):
        return down(node, address, failed.finding.detail, before)
    return NodeState(node.name, node.kind, f"{address[0]}:{address[1]}", True, "unknown",
                     findings=(failed.finding,))


def _split_brain(targets: Sequence[Target], states: list[NodeState],
                 hints: dict[str, Hints]) -> list[NodeState]:
    """Errant transactions, second primaries, writable replicas: the split-brain check's
    findings on the reachable MySQL-family and PostgreSQL nodes, flagged on each node."""
    reached = Selection(tuple(t for t in targets if t.name in hints))  # other kinds: left out
    if not reached.of_kinds(APPLIES_TO)[0]:
        return states
    result = check_split_brain(reached, heartbeat_wait=0)
    flagged: dict[str, list[Finding]] = {}
    for f in result.findings:
        if f.kind in SPLIT_BRAIN:
            flagged.setdefault(f.node, []).append(f)
    return [replace(s, errant=True, findings=(*s.findings, *flagged[s.name]))
            if s.name in flagged else s for s in states]
