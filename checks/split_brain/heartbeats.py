"""Concurrent heartbeat writers: the rows of two server_ids advancing between two reads of
a topology's heartbeat tables mean two servers each believe they are the primary. The
reads are best effort where there is nothing to compare (no table: no finding), not where
the role may not look: a table the role may not read is an UNKNOWN finding naming the
grant (`heartbeat_denied`), never "no concurrent writers".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbgauge.checks.nodes import INSUFFICIENT_PRIVILEGE
from dbgauge.checks.split_brain.model import HEARTBEAT, MySQLNode
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.privileges import denied
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.heartbeat import HeartbeatRow, read_heartbeat_table
from dbgauge.toolkit.result import Finding, Status
from dbgauge.toolkit.targets import Target


def advancing(before: Sequence[HeartbeatRow], after: Sequence[HeartbeatRow]) -> frozenset[int]:
    """server_ids whose heartbeat row got newer between two reads."""
    old = {r.server_id: r.ts for r in before}
    return frozenset(r.server_id for r in after if r.ts > old.get(r.server_id, r.ts))


def heartbeat_findings(groups: Sequence[Sequence[MySQLNode]],
                       seen: Mapping[str, frozenset[int]]) -> list[Finding]:
    """Two or more heartbeat writers advancing within one topology."""
    out: list[Finding] = []
    for group in groups:
        writers = sorted(set().union(*(seen.get(n.name, frozenset()) for n in group)))
        if len(writers) < 2:
            continue
        by_id = {n.server_id: n.name for n in group}
        listed = ", ".join(f"{w} ({by_id[w]})" if w in by_id else str(w) for w in writers)
        where = [by_id[w] for w in writers if w in by_id] or [
            next(n.name for n in group if len(seen.get(n.name, ())) > 1)]
        for name in where:
            out.append(Finding(
                Status.CRITICAL, name, HEARTBEAT,
                f"heartbeat rows of server_id {listed} are all advancing: more than one "
                "server believes it is the primary", {"writers": listed},
                fix="run the heartbeat writer only on the primary (dbgauge heartbeat mode "
                    "read elsewhere; pt-heartbeat --update only on the primary)"))
    return out


def read_heartbeats(node: Target, conn: Connection, table: str) -> list[HeartbeatRow] | None:
    """The heartbeat rows of a MySQL-family node; None without a heartbeat table (this part
    of the check is best effort). A table the role may not read raises (naming the grant):
    MariaDB refuses it before it looks whether it exists, so "no table" is not known."""
    settings = node.heartbeat
    name = settings.table if settings is not None else table
    try:
        return list(read_heartbeat_table(conn, name).rows)
    except QueryError as exc:
        if denied(exc):
            raise
        return None


def heartbeat_denied(node: str, why: str) -> Finding:
    """UNKNOWN: the node's heartbeat rows were not compared, and the grant that lets them."""
    return Finding(Status.UNKNOWN, node, INSUFFICIENT_PRIVILEGE,
                   f"heartbeat rows not compared (two writers would not show): {why}")
