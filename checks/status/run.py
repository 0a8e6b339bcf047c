"""The discovery `dbgauge status` and the daemon's page run: every configured target read
in parallel (one connection each), the split-brain check over the reachable ones, then
the pure linking. A node that cannot be reached is down (CRITICAL) and keeps its place
in the tree it had in `previous` (the last discovery of a watch or of the daemon)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dbgauge.checks.health.model import failure
from dbgauge.checks.split_brain.model import ERRANT, PRIMARIES, TIMELINE, WRITABLE_REPLICA
from dbgauge.checks.split_brain.run import check_split_brain
from dbgauge.checks.status.model import NodeState, Topology
from dbgauge.checks.status.reads import Hints, down, read_node
from dbgauge.checks.status.topology import find_links, kept_links, with_roles
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConnectError
from dbgauge.toolkit.result import Finding
from dbgauge.toolkit.targets import Selection, Target, fan_out

SPLIT_BRAIN = frozenset({ERRANT, WRITABLE_REPLICA, PRIMARIES, TIMELINE})


class _Unreachable(Exception):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _read(node: Target) -> tuple[NodeState, Hints]:
    params = parse_dsn(node.dsn)
    address = (params.host, params.port)
    try:
        conn = connect(node)
    except ConnectError as exc:
        raise _Unreachable(exc) from exc
    try:
        return read_node(node, conn, address)
    finally:
        conn.close()


def discover(targets: Sequence[Target], previous: Topology | None = None) -> Topology:
    """Read every target, link them, and judge each node."""
    before = {n.name: n for n in previous.nodes} if previous else {}
    states: list[NodeState] = []
    hints: dict[str, Hints] = {}
    for node, got in zip(targets, fan_out(targets, _read, name="status"), strict=True):
        params = parse_dsn(node.dsn)
        address = (params.host, params.port)
        if isinstance(got, _Unreachable):
            detail = failure(node.name, got.cause).findings[0].detail
            states.append(down(node, address, detail, before))
        elif isinstance(got, BaseException):  # reached, but a read failed: UNKNOWN
            (finding,) = failure(node.name, got).findings
            states.append(NodeState(node.name, node.kind, f"{address[0]}:{address[1]}", True,
                                    "unknown", findings=(finding,)))
        else:
            states.append(got[0])
            hints[node.name] = got[1]
    states = _split_brain(targets, states, hints)
    links = find_links(states, hints)
    if previous is not None:
        gone = {n.name for n in states if not n.up}
        links += kept_links(previous.links, gone, links)
    return Topology(tuple(with_roles(states, links)), tuple(links))


def _split_brain(targets: Sequence[Target], states: list[NodeState],
                 hints: dict[str, Hints]) -> list[NodeState]:
    """Errant transactions, second primaries, writable replicas: the split-brain check's
    findings on the reachable MySQL-family and PostgreSQL nodes, flagged on each node."""
    chosen = tuple(t for t in targets if t.name in hints and t.kind in ("mysql", "postgres"))
    if not chosen:
        return states
    result = check_split_brain(Selection(chosen), heartbeat_wait=0)
    flagged: dict[str, list[Finding]] = {}
    for f in result.findings:
        if f.kind in SPLIT_BRAIN:
            flagged.setdefault(f.node, []).append(f)
    return [replace(s, errant=True, findings=(*s.findings, *flagged[s.name]))
            if s.name in flagged else s for s in states]
