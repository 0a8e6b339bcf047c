"""Split-brain as the daemon schedules it: besides dbgauge_check_status, the findings
by kind for every node -- every kind present (0) for every node so no series comes and
goes -- and the errant transactions per node; GTIDs stay out of labels."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from dbgauge.checks.schedule import ScheduledCheck
from dbgauge.checks.split_brain.model import APPLIES_TO, ERRANT, KINDS, NAME
from dbgauge.checks.split_brain.run import check_split_brain
from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.result import CheckResult

SPLIT_BRAIN_FINDINGS = MetricSpec(
    "dbgauge_split_brain_findings", "gauge",
    f"Split-brain findings per node and kind ({', '.join(KINDS)}); 0 when none. Cached "
    "from the split-brain job's last run; `dbgauge check split-brain` prints the GTIDs and "
    "evidence.",
    ("kind", "node"))
SPLIT_BRAIN_ERRANT = MetricSpec(
    "dbgauge_split_brain_errant_transactions", "gauge",
    "Errant transactions found on the node at the split-brain job's last run (cached); 0 "
    "when none. Where MariaDB's binlog is not readable, each errant (domain, server_id) "
    "stream counts once.", ("node",))


def samples(result: CheckResult, nodes: Sequence[str]) -> list[Sample]:
    """Findings by kind and errant transactions, for each node (pure)."""
    counts = Counter((f.kind, f.node) for f in result.findings)
    errant = Counter[str]()
    for f in result.findings:
        if f.kind == ERRANT:
            errant[f.node] += int(f.evidence.get("errant_count", "1"))
    out = []
    for node in nodes:
        for kind in KINDS:
            out.append(Sample(SPLIT_BRAIN_FINDINGS.name, float(counts[(kind, node)]),
                              {"kind": kind, "node": node}))
        out.append(Sample(SPLIT_BRAIN_ERRANT.name, float(errant[node]), {"node": node}))
    return out


SCHEDULED = ScheduledCheck(NAME, APPLIES_TO,
                           lambda nodes, _limits, down, deadline: check_split_brain(
                               nodes, down=down, deadline=deadline),
                           metrics=(SPLIT_BRAIN_FINDINGS, SPLIT_BRAIN_ERRANT), samples=samples)
