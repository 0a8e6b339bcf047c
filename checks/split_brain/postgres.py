"""PostgreSQL analysis: two primaries of one system identifier, and standbys off their
upstream's timeline or ahead of its WAL. Pure: the nodes come from `reads`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbgauge.checks.nodes import INSUFFICIENT_PRIVILEGE
from dbgauge.checks.split_brain.address import same_address
from dbgauge.checks.split_brain.model import PRIMARIES, TIMELINE, PgNode
from dbgauge.toolkit.db.values import text
from dbgauge.toolkit.result import Finding, Status


def parse_lsn(value: object) -> int | None:
    """'16/B374D848' -> byte position; None for NULL or garbage."""
    hi, sep, lo = text(value).partition("/")
    try:
        return (int(hi, 16) << 32) | int(lo, 16) if sep else None
    except ValueError:
        return None


def format_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


def upstream_of(standby: PgNode, nodes: Sequence[PgNode]) -> PgNode | None:
    """The node a standby streams from: by its WAL receiver's sender address, else the one
    primary of its system identifier."""
    if standby.sender is not None:
        for node in nodes:
            if node is not standby and same_address(standby.sender, node.address):
                return node
    primaries = [n for n in nodes if not n.in_recovery
                 and n.system_identifier == standby.system_identifier]
    return primaries[0] if len(primaries) == 1 else None


def pg_findings(first: Sequence[PgNode], later: Mapping[str, PgNode]) -> list[Finding]:
    """Two primaries of one system identifier; standbys off their upstream's timeline or
    ahead of its WAL (standbys read first, upstreams `later`)."""
    out: list[Finding] = []
    systems: dict[str, list[PgNode]] = {}
    for node in first:
        systems.setdefault(node.system_identifier, []).append(node)
    for sysid, members in systems.items():
        primaries = [n for n in members if not n.in_recovery]
        if len(primaries) < 2:
            continue
        for node in primaries:
            others = ", ".join(f"{p.name} (timeline {p.timeline})"
                               for p in primaries if p is not node)
            out.append(Finding(
                Status.CRITICAL, node.name, PRIMARIES,
                f"not in recovery, like {others}: {len(primaries)} primaries of system "
                f"identifier {sysid}",
                {"system_identifier": sysid, "timeline": str(node.timeline)},
                fix="stop writes to all but one primary; rebuild the others as its standbys "
                    "with pg_rewind (needs wal_log_hints or data checksums) or a fresh "
                    "pg_basebackup"))
    for standby in first:
        if not standby.in_recovery:
            continue
        upstream = upstream_of(standby, first)
        if upstream is None:
            continue
        now = later.get(upstream.name, upstream)
        fix = (f"rebuild {standby.name} from {upstream.name}: pg_rewind onto its timeline "
               "(needs wal_log_hints or data checksums), or a fresh pg_basebackup")
        if standby.unseen:  # its timeline may trail: a difference would prove nothing
            out.append(Finding(Status.UNKNOWN, standby.name, INSUFFICIENT_PRIVILEGE,
                               f"timeline not compared with {upstream.name}'s: "
                               f"{standby.unseen}"))
        if not standby.unseen and standby.timeline is not None and now.timeline is not None \
                and standby.timeline != now.timeline:
            out.append(Finding(
                Status.CRITICAL, standby.name, TIMELINE,
                f"on timeline {standby.timeline}, its upstream {upstream.name} is on timeline "
                f"{now.timeline}", {"upstream": upstream.name}, fix=fix))
        elif standby.replay_lsn is not None and now.wal_lsn is not None \
                and standby.replay_lsn > now.wal_lsn:
            out.append(Finding(
                Status.CRITICAL, standby.name, TIMELINE,
                f"replayed WAL up to {format_lsn(standby.replay_lsn)}, ahead of its upstream "
                f"{upstream.name}'s current WAL {format_lsn(now.wal_lsn)}: their histories "
                "diverged", {"upstream": upstream.name}, fix=fix))
    return out
