"""Running one health check over a selection of nodes: a connection per node, opened in
parallel; a node that cannot be reached or queried becomes an UNKNOWN finding naming the
node and the reason -- never an OK."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from dbgauge.checks.health.model import HealthCheck, NodeOutcome, Thresholds, failure
from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import CheckResult, Finding, Status, plugin_result
from dbgauge.toolkit.targets import Selection, Target, fan_out

log = logging.getLogger(__name__)


def each_node(nodes: Sequence[Target], work: Callable[[Target, Connection], NodeOutcome]
              ) -> list[NodeOutcome]:
    """Run `work` on every node with its own connection, in parallel, in node order."""
    def one(node: Target) -> NodeOutcome:
        started = time.monotonic()
        conn = connect(node)
        connected = time.monotonic()
        try:
            return work(node, conn)
        finally:
            conn.close()
            log.debug("node %s (%s %s): connected in %.3f s, checked in %.3f s", node.name,
                      conn.server.flavor, conn.server.version_text, connected - started,
                      time.monotonic() - connected)

    return [r if isinstance(r, NodeOutcome) else failure(n.name, r)
            for n, r in zip(nodes, fan_out(nodes, one, name="check"), strict=True)]


def run_health(check: HealthCheck, nodes: Selection,
               limits: Thresholds | None = None) -> CheckResult:
    """Run one health check on the nodes of the kinds it supports.

    Configured targets of other kinds are skipped; a node the user named explicitly that
    the check cannot apply to is UNKNOWN (a typo must not turn into OK).
    """
    if limits is None:
        limits = check.DEFAULTS
    elif check.DEFAULTS is None:
        raise ConfigError(f"check {check.NAME} takes no --warning/--critical: each problem "
                          "it finds has its own severity")
    if limits is not None:
        limits.validate(check.NAME)
    runnable, misfits = nodes.of_kinds(check.KINDS)
    kinds = ", ".join(sorted(check.KINDS))
    skipped = [NodeOutcome(node.name, (Finding(
        Status.UNKNOWN, node.name, "not-applicable",
        f"check {check.NAME} applies to kind {kinds}, not {node.kind}"),)) for node in misfits]
    chosen = limits
    outcomes = each_node(runnable, lambda n, c: check.evaluate(n, c, chosen)) + skipped
    if not outcomes:
        return plugin_result(check.NAME, [Finding(
            Status.UNKNOWN, "", "no-nodes",
            f"no node of kind {kinds} to check")],
            "nothing to check")
    return summarize(check.NAME, outcomes)


def summarize(name: str, outcomes: Sequence[NodeOutcome]) -> CheckResult:
    """One result from per-node outcomes; the summary names problem nodes first."""
    findings = [f for o in outcomes for f in o.findings]
    perf = [p for o in outcomes for p in o.perfdata]
    bad = [o for o in outcomes if o.findings]
    good = [o for o in outcomes if not o.findings]
    parts = [f"{o.node}: {o.findings[0].detail}" + (
        f" (+{len(o.findings) - 1} more)" if len(o.findings) > 1 else "") for o in bad]
    parts += [f"{o.node}: {o.note}" if o.note else o.node for o in good]
    nodes = [{"node": o.node, "status": o.status.name, "note": o.note or "-"} for o in outcomes]
    return replace(plugin_result(name, findings, "; ".join(parts), perf),
                   evidence={"nodes": nodes})
