"""The split-brain run: connect to every node, read replicas before their sources, read the
sources and upstreams again, look at the binlogs of replicas with errant transactions and
at the heartbeat tables twice, then analyse and return one result.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbgauge.checks.health.model import failure
from dbgauge.checks.split_brain.binlog import read_errant_events
from dbgauge.checks.split_brain.heartbeats import advancing, heartbeat_findings, read_heartbeats
from dbgauge.checks.split_brain.model import ERRANT, NAME, Errant, ErrantEvents, MySQLNode, PgNode
from dbgauge.checks.split_brain.mysql import find_errant, mysql_findings, source_of, topologies
from dbgauge.checks.split_brain.postgres import pg_findings, upstream_of
from dbgauge.checks.split_brain.reads import reread, snapshot
from dbgauge.collectors.mysql_heartbeat import HeartbeatRow
from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.result import CheckResult, Finding, Status, plugin_result, worst
from dbgauge.toolkit.targets import Selection, Target, fan_out

DEFAULT_HEARTBEAT_TABLE = "dbgauge.heartbeat"
DEFAULT_HEARTBEAT_WAIT = 2.0  # seconds between the two heartbeat reads (writers beat each 1 s)


@dataclass
class _Live:
    node: Target
    conn: Connection
    first: MySQLNode | PgNode | None = None
    beats: list[HeartbeatRow] | None = None


def check_split_brain(nodes: Selection, *,
                      heartbeat_wait: float = DEFAULT_HEARTBEAT_WAIT,
                      heartbeat_table: str = DEFAULT_HEARTBEAT_TABLE) -> CheckResult:
    """Read every node (replicas before their sources), analyse, and return the result.

    Unreachable nodes are UNKNOWN findings; the others are still compared.
    """
    started = time.monotonic()
    candidates, misfits = nodes.of_kinds(("mysql", "postgres"))
    problems = [Finding(Status.UNKNOWN, node.name, "check-failed",
                        f"split-brain applies to mysql and postgres nodes, not {node.kind}")
                for node in misfits]
    live: list[_Live] = []
    for node, conn in zip(candidates, fan_out(candidates, connect, name="check"), strict=True):
        if isinstance(conn, Exception):
            problems += failure(node.name, conn).findings
        else:
            live.append(_Live(node, conn))
    try:
        def first_read(item: _Live) -> _Live:
            item.first = snapshot(item.node, item.conn)
            if item.node.kind == "mysql" and heartbeat_wait > 0:
                item.beats = read_heartbeats(item.node, item.conn, heartbeat_table)
            return item

        ok: list[_Live] = []
        for item, got in zip(live, fan_out(live, first_read, name="check"), strict=True):
            if isinstance(got, Exception):
                problems += failure(item.node.name, got).findings
            else:
                ok.append(got)
        beats_at = time.monotonic()
        findings = problems + _analyse(ok, heartbeat_wait, beats_at, heartbeat_table)
    finally:
        for item in live:
            item.conn.close()
    mysql = [i for i in live if isinstance(i.first, MySQLNode)]
    pg = [i for i in live if isinstance(i.first, PgNode)]
    if findings:
        head = next(f for f in findings if f.severity is worst(g.severity for g in findings))
        summary = f"{head.node}: {head.detail}"
        if len(findings) > 1:
            summary += f" (+{len(findings) - 1} more finding(s))"
    else:
        summary = (f"no split-brain in {len(mysql)} MySQL-family and {len(pg)} PostgreSQL "
                   f"node(s)")
    errant = sum(int(f.evidence.get("errant_count", "1")) for f in findings if f.kind == ERRANT)
    perf = [("nodes", float(len(nodes.targets))), ("findings", float(len(findings))),
            ("errant_transactions", float(errant)),
            ("seconds", round(time.monotonic() - started, 3))]
    return plugin_result(NAME, findings, summary, perf)


def _analyse(items: Sequence[_Live], heartbeat_wait: float, beats_at: float,
             heartbeat_table: str) -> list[Finding]:
    """Second reads (sources and upstreams, after every first read), binlog details and
    the second heartbeat read; then the pure analysis."""
    mysql_first = [i.first for i in items if isinstance(i.first, MySQLNode)]
    pg_first = [i.first for i in items if isinstance(i.first, PgNode)]
    by_name = {i.node.name: i for i in items}
    sources = {s.name for n in mysql_first for ch in n.channels
               for s in [source_of(ch, mysql_first)] if s is not None}
    sources |= {u.name for n in pg_first if n.in_recovery
                for u in [upstream_of(n, pg_first)] if u is not None}
    again = [by_name[name] for name in sorted(sources)]
    problems: list[Finding] = []
    later: dict[str, Any] = {}

    def second(item: _Live) -> MySQLNode | PgNode:
        assert item.first is not None
        return reread(item.conn, item.first)

    for item, read in zip(again, fan_out(again, second, name="check"), strict=True):
        if isinstance(read, Exception):
            problems += failure(item.node.name, read).findings
        else:
            later[item.node.name] = read
    errants = [find_errant(n, mysql_first, later) for n in mysql_first
               if n.channels and n.name not in {f.node for f in problems}]
    errants = [e for e in errants if e]

    def details(errant: Errant) -> ErrantEvents | None:
        return read_errant_events(by_name[errant.replica.name].conn, errant.is_errant,
                                  errant.before_file)

    events: dict[str, ErrantEvents | None] = {}
    for errant, found in zip(errants, fan_out(errants, details, name="check"), strict=True):
        events[errant.replica.name] = None if isinstance(found, Exception) else found
    seen: dict[str, frozenset[int]] = {}
    watched = [i for i in items if i.beats]
    if watched:
        time.sleep(max(0.0, heartbeat_wait - (time.monotonic() - beats_at)))
        for item, rows in zip(watched, fan_out(watched, lambda i: read_heartbeats(
                i.node, i.conn, heartbeat_table), name="check"), strict=True):
            if isinstance(rows, list) and item.beats is not None:
                seen[item.node.name] = advancing(item.beats, rows)
    return (problems + mysql_findings(mysql_first, errants, events)
            + pg_findings(pg_first, later)
            + heartbeat_findings(topologies(mysql_first), seen))
