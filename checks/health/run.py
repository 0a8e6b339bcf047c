"""Running one health check over a selection of nodes (`checks.nodes`: a connection per
node, opened in parallel; a node that cannot be reached becomes a CRITICAL finding, one
that cannot be queried or does not answer in time an UNKNOWN one, naming the node and
the reason -- never an OK), and its one result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dbgauge.checks.health.model import HealthCheck, NodeOutcome, Thresholds
from dbgauge.checks.health.scope import Scope
from dbgauge.checks.nodes import AUTH_FAILED, Failed, applicable, each_node
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import CheckResult, Finding, Status, plugin_result
from dbgauge.toolkit.targets import Deadline, Selection


def run_health(check: HealthCheck, nodes: Selection,
               limits: Thresholds | None = None, *, deadline: Deadline | None = None,
               down: Status = Status.CRITICAL, scope: Scope | None = None) -> CheckResult:
    """Run one health check on the nodes of the kinds it supports.

    Configured targets of other kinds are skipped; a node the user named explicitly that
    the check cannot apply to is UNKNOWN (a typo must not turn into OK). A server that is
    down is `down` (CRITICAL unless asked otherwise); a node without a result by
    `deadline` is UNKNOWN, named, and the others' results are kept.
    """
    if check.own_thresholds is not None:  # -w/-c as written, in the scope
        check.own_thresholds.check(scope or Scope())
    elif limits is None and check.needs_thresholds:
        raise ConfigError(f"check {check.name} has no default thresholds (as check_postgres): "
                          "give --warning or --critical")
    if limits is None:
        limits = check.defaults
    elif check.defaults is None:
        raise ConfigError(f"check {check.name} takes no --warning/--critical: each problem "
                          "it finds has its own severity")
    if limits is not None:
        limits.validate(check.name)
    runnable, misfits = applicable(check.name, check.kinds, nodes)
    chosen = limits
    refused_ok = scope is not None and scope.ignore_auth
    if check.across is not None:  # one run comparing the nodes
        outcomes = list(check.across(runnable, chosen, scope or Scope(), deadline, down)
                        ) if runnable else []
    else:
        outcomes = [got if isinstance(got, NodeOutcome) else _failed(got, refused_ok)
                    for got in each_node(runnable,
                                         lambda n, c: check.evaluate(n, c, chosen, scope),
                                         deadline=deadline, down=down,
                                         session_timeouts=not check.plain_session)]
    outcomes += [NodeOutcome(f.node, (f,)) for f in misfits]
    if not outcomes:
        kinds = ", ".join(sorted(check.kinds))
        return plugin_result(check.name, [Finding(
            Status.UNKNOWN, "", "no-nodes",
            f"no node of kind {kinds} to check")],
            "nothing to check")
    return summarize(check.name, outcomes)


def _failed(failed: Failed, refused_ok: bool = False) -> NodeOutcome:
    """A node that could not be checked; with `refused_ok` (connection -n, check_mysql's
    --ignore-auth) a refused password is OK: the server answered, which is all -n asks."""
    if refused_ok and failed.finding.kind == AUTH_FAILED:
        return NodeOutcome(failed.finding.node, note="the server answered (its password "
                                                     "refusal ignored: -n/--ignore-auth)")
    return NodeOutcome(failed.finding.node, (failed.finding,), note=failed.finding.detail)


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
