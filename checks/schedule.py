"""Scheduled checks: the daemon runs each `checks:` entry of the config on its interval.

A check across nodes (split-brain waits for two heartbeat reads) is too slow for a scrape,
so it runs as a `toolkit.jobs.Job` and the daemon serves its last result:
`dbgauge_check_status{check,target}` (the monitoring-plugin code per node) and, for
split-brain, `dbgauge_split_brain_findings{kind,node}` -- counts by finding kind, every
kind present (0) for every node so no series comes and goes; GTIDs stay out of labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.run import run_health
from dbgauge.checks.split_brain.model import KINDS
from dbgauge.checks.split_brain.run import check_split_brain
from dbgauge.toolkit.config import CheckJobConfig, Config
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.jobs import Job
from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.result import CheckResult, Status, worst
from dbgauge.toolkit.targets import Selection, select

STATUS = MetricSpec(
    "dbgauge_check_status", "gauge",
    "Result of a scheduled dbgauge check for one target, as the monitoring-plugin code: 0 OK, "
    "1 WARNING, 2 CRITICAL, 3 UNKNOWN (unreachable, or could not tell); cached from the "
    "check job's last run (see dbgauge_job_last_run_timestamp_seconds{dbgauge_job=\"check:...\"}).",
    ("check", "target"))
SPLIT_BRAIN_FINDINGS = MetricSpec(
    "dbgauge_split_brain_findings", "gauge",
    f"Split-brain findings per node and kind ({', '.join(KINDS)}); 0 when none. Cached "
    "from the split-brain "
    "job's last run; `dbgauge check split-brain` prints the GTIDs and evidence.",
    ("kind", "node"))
SPLIT_BRAIN_ERRANT = MetricSpec(
    "dbgauge_split_brain_errant_transactions", "gauge",
    "Errant transactions found on the node at the split-brain job's last run (cached); 0 "
    "when none. Where MariaDB's binlog is not readable, each errant (domain, server_id) "
    "stream counts once.", ("node",))

SPLIT_BRAIN = "split-brain"


def check_names() -> tuple[str, ...]:
    return (SPLIT_BRAIN, *health_checks())


def validate_check_job(check: str, warning: float | str | None,
                       critical: float | str | None) -> None:
    """Config-time validation of a `checks:` entry (raises ValueError for pydantic)."""
    names = check_names()
    if check not in names:
        raise ValueError(f"unknown check {check!r}; available: {', '.join(names)}")
    defaults = None if check == SPLIT_BRAIN else health_checks()[check].defaults
    if defaults is None and (warning is not None or critical is not None):
        raise ValueError(f"check {check} takes no warning/critical thresholds")
    if defaults is not None:
        try:
            defaults.override(warning, critical).validate(f"check {check}")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None


def node_statuses(result: CheckResult, nodes: Sequence[str]) -> dict[str, Status]:
    """Each node's worst finding (OK without one); findings on no node go to ''."""
    out = {name: Status.OK for name in nodes}
    for f in result.findings:
        out[f.node] = worst((out.get(f.node, Status.OK), f.severity))
    return out


def result_samples(check: str, result: CheckResult, nodes: Sequence[str]) -> list[Sample]:
    """The samples one check run yields (pure: unit-tested without a daemon)."""
    statuses = node_statuses(result, nodes)
    out = [Sample(STATUS.name, float(status), {"check": check, "target": target})
           for target, status in statuses.items()]
    if check == SPLIT_BRAIN:
        counts = Counter((f.kind, f.node) for f in result.findings)
        errant = Counter[str]()
        for f in result.findings:
            if f.kind == "errant-transactions":
                errant[f.node] += int(f.evidence.get("errant_count", "1"))
        for node in statuses:
            for kind in KINDS:
                out.append(Sample(SPLIT_BRAIN_FINDINGS.name, float(counts[(kind, node)]),
                                  {"kind": kind, "node": node}))
            out.append(Sample(SPLIT_BRAIN_ERRANT.name, float(errant[node]), {"node": node}))
    return out


class CheckJob(Job):
    """One `checks:` entry of the config, run by the daemon every `interval` seconds."""

    def __init__(self, name: str, entry: CheckJobConfig, config: Config) -> None:
        self.name = name
        self.interval = entry.interval
        self.entry = entry
        self.config = config
        self.metrics = (STATUS, SPLIT_BRAIN_FINDINGS, SPLIT_BRAIN_ERRANT) \
            if entry.check == SPLIT_BRAIN else (STATUS,)

    def nodes(self) -> Selection:
        """The entry's targets (every configured one if it names none), less configured
        targets of kinds the check does not apply to."""
        chosen = select(self.entry.targets or (), (), self.config.all_targets())
        kinds = {"mysql", "postgres"} if self.entry.check == SPLIT_BRAIN \
            else health_checks()[self.entry.check].kinds
        return Selection(tuple(n for n in chosen.targets
                               if n.kind in kinds or n.name in chosen.named), chosen.named)

    def run(self) -> Iterable[Sample]:
        nodes = self.nodes()
        if self.entry.check == SPLIT_BRAIN:
            result = check_split_brain(nodes)
        else:
            check = health_checks()[self.entry.check]
            limits = check.limits(self.entry.warning, self.entry.critical)
            result = run_health(check, nodes, limits)
        return result_samples(self.entry.check, result, [n.name for n in nodes.targets])


def check_jobs(config: Config) -> list[Job]:
    """One job per `checks:` entry: 'check:NAME', then 'check:NAME#2', ... for repeats."""
    jobs: list[Job] = []
    seen: Counter[str] = Counter()
    for entry in config.checks:
        seen[entry.check] += 1
        suffix = f"#{seen[entry.check]}" if seen[entry.check] > 1 else ""
        jobs.append(CheckJob(f"check:{entry.check}{suffix}", entry, config))
    return jobs
