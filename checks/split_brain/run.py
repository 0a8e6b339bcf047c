"""The split-brain run: connect to every node, read replicas before their sources, read the
sources and upstreams again, look at the binlogs of replicas with errant transactions and
at the heartbeat tables twice, then analyse and return one result.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbgauge.checks.nodes import Connected, applicable
from dbgauge.checks.split_brain.binlog import read_errant_events
from dbgauge.checks.split_brain.heartbeats import (
    advancing,
    heartbeat_denied,
    heartbeat_findings,
    read_heartbeats,
)
from dbgauge.checks.split_brain.model import (
    APPLIES_TO,
    ERRANT,
    NAME,
    Errant,
    ErrantEvents,
    MySQLNode,
    PgNode,
)
from dbgauge.checks.split_brain.mysql import find_errant, mysql_findings, source_of, topologies
from dbgauge.checks.split_brain.postgres import pg_findings, upstream_of
from dbgauge.checks.split_brain.reads import reread, snapshot
from dbgauge.toolkit import DEFAULT_HEARTBEAT_TABLE
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.heartbeat import HeartbeatRow
from dbgauge.toolkit.result import CheckResult, Finding, Status, plugin_result, worst
from dbgauge.toolkit.targets import Deadline, Selection, Target

DEFAULT_HEARTBEAT_WAIT = 2.0  # seconds between the two heartbeat reads (writers beat each 1 s)


@dataclass(frozen=True)
class _First:
    """A node's first read, and its heartbeat rows then (None: not watched, or `denied`:
    the role may not read them, and the grant)."""

    node: MySQLNode | PgNode
    beats: list[HeartbeatRow] | None = None
    denied: str = ""


def check_split_brain(nodes: Selection, *,
                      heartbeat_wait: float = DEFAULT_HEARTBEAT_WAIT,
                      heartbeat_table: str = DEFAULT_HEARTBEAT_TABLE,
                      deadline: Deadline | None = None,
                      down: Status = Status.CRITICAL) -> CheckResult:
    """Read every node (replicas before their sources), analyse, and return the result.

    A node that is down is a `down` finding (CRITICAL unless asked otherwise), one that
    does not answer by `deadline` an UNKNOWN one; the others are still compared.
    """
    started = time.monotonic()
    candidates, findings = applicable(NAME, APPLIES_TO, nodes)

    def first_read(node: Target, conn: Connection) -> _First:
        me = snapshot(node, conn)
        if node.kind != "mysql" or heartbeat_wait <= 0:
            return _First(me)
        try:
            return _First(me, read_heartbeats(node, conn, heartbeat_table))
        except QueryError as exc:  # denied: read_heartbeats keeps no other error
            return _First(me, denied=str(exc))

    with Connected(candidates, deadline=deadline, down=down) as live:
        first = live.each(first_read, within=0.5)  # a node that hangs leaves time for more
        beats_at = time.monotonic()
        wait = heartbeat_wait if deadline is None else min(heartbeat_wait, deadline.left() / 2)
        found = _analyse(live, first, wait, beats_at, heartbeat_table)
    findings += live.findings + found
    return _result(nodes, [f.node for f in first.values()], findings,
                   time.monotonic() - started)


def _result(nodes: Selection, read: Sequence[MySQLNode | PgNode], findings: list[Finding],
            seconds: float) -> CheckResult:
    """The one result: the worst finding first in the summary, counts as perfdata."""
    if findings:
        head = next(f for f in findings if f.severity is worst(g.severity for g in findings))
        summary = f"{head.node}: {head.detail}"
        if len(findings) > 1:
            summary += f" (+{len(findings) - 1} more finding(s))"
    else:
        mysql = sum(isinstance(n, MySQLNode) for n in read)
        summary = (f"no split-brain in {mysql} MySQL-family and {len(read) - mysql} "
                   "PostgreSQL node(s)")
    errant = sum(int(f.evidence.get("errant_count", "1")) for f in findings if f.kind == ERRANT)
    perf = [("nodes", float(len(nodes.targets))), ("findings", float(len(findings))),
            ("errant_transactions", float(errant)), ("seconds", round(seconds, 3))]
    return plugin_result(NAME, findings, summary, perf)


def _analyse(live: Connected, first: Mapping[str, _First], heartbeat_wait: float,
             beats_at: float, heartbeat_table: str) -> list[Finding]:
    """Second reads (sources and upstreams, after every first read), binlog details and
    the second heartbeat read; then the pure analysis."""
    mysql_first = [f.node for f in first.values() if isinstance(f.node, MySQLNode)]
    pg_first = [f.node for f in first.values() if isinstance(f.node, PgNode)]
    sources = {s.name for n in mysql_first for ch in n.channels
               for s in [source_of(ch, mysql_first)] if s is not None}
    sources |= {u.name for n in pg_first if n.in_recovery
                for u in [upstream_of(n, pg_first)] if u is not None}
    again = sorted(sources)
    later: dict[str, Any] = live.each(lambda node, conn: reread(conn, first[node.name].node), again)
    unread = set(again) - set(later)
    errants = [e for e in (find_errant(n, mysql_first, later) for n in mysql_first
                           if n.channels and n.name not in unread) if e]
    events = _errant_events(live, errants)
    seen: dict[str, frozenset[int]] = {}
    watched = [name for name, f in first.items() if f.beats]
    if watched:
        time.sleep(max(0.0, heartbeat_wait - (time.monotonic() - beats_at)))
        rows = live.each(lambda node, conn: read_heartbeats(node, conn, heartbeat_table),
                         watched, best_effort=True)
        seen = {name: advancing(first[name].beats or [], now)
                for name, now in rows.items() if now is not None}
    return (mysql_findings(mysql_first, errants, events)
            + pg_findings(pg_first, later)
            + heartbeat_findings(topologies(mysql_first), seen)
            + [heartbeat_denied(name, f.denied) for name, f in first.items() if f.denied])


def _errant_events(live: Connected, errants: Sequence[Errant]
                   ) -> dict[str, ErrantEvents | None]:
    """What each replica's binlog says about its errant transactions (best effort)."""
    by_replica = {e.replica.name: e for e in errants}
    return live.each(lambda node, conn: read_errant_events(
        conn, by_replica[node.name].is_errant, by_replica[node.name].before_file),
        by_replica, best_effort=True)
