"""Scheduled checks and checksums: the jobs the daemon runs on an interval, one per
`checks:` and `checksums:` entry of the config, each in its own thread
(`toolkit.jobs`, the core's scheduler, to which `dbgauge.app` hands these builders).

A check across nodes (split-brain waits for two heartbeat reads) or a table checksum is
too slow for a scrape, so the daemon serves the samples of the last run. Every scheduled
check gives `dbgauge_check_status{check,target}` (the monitoring-plugin code per node);
a check may declare more metrics and how its result becomes their samples (split-brain's
findings by kind, `checks.split_brain.metrics`). Which checks there are comes from
`dbgauge.app` (the health registry and split-brain); checksums' metrics are the drift
package's (`checks.drift.schedule`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from dbgauge.checks.drift.model import ChecksumOptions, LogReporter
from dbgauge.checks.drift.run import run_checksum
from dbgauge.checks.drift.schedule import METRICS as CHECKSUM_METRICS
from dbgauge.checks.drift.schedule import samples as checksum_samples
from dbgauge.checks.health.model import HealthCheck
from dbgauge.checks.health.options import CheckInput, entry_input
from dbgauge.checks.health.run import run_health
from dbgauge.checks.health.scope import per_database
from dbgauge.toolkit.config import CheckJobConfig, ChecksumJobConfig, Config
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.jobs import Job
from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.result import CheckResult, Status, worst
from dbgauge.toolkit.targets import Deadline, Selection, Target, select

Level = float | str | None  # a `checks:` entry's warning or critical, as written

STATUS = MetricSpec(
    "dbgauge_check_status", "gauge",
    "Result of a scheduled dbgauge check for one target, as the monitoring-plugin code: 0 OK, "
    "1 WARNING, 2 CRITICAL (also a target that is down), 3 UNKNOWN (could not tell); cached "
    "from the "
    "check job's last run (see dbgauge_job_last_run_timestamp_seconds{dbgauge_job=\"check:...\"}).",
    ("check", "target"))


def _no_samples(_result: CheckResult, _nodes: Sequence[str]) -> list[Sample]:
    return []


def _takes_nothing(name: str) -> Callable[[Level, Level, Mapping[str, object]], CheckInput]:
    def prepare(warning: Level, critical: Level, options: Mapping[str, object]) -> CheckInput:
        if warning is not None or critical is not None:
            raise ConfigError(f"check {name} takes no warning/critical thresholds: each "
                              "problem it finds has its own severity")
        if options:
            raise ConfigError(f"check {name} takes no options")
        return CheckInput()
    return prepare


@dataclass(frozen=True)
class ScheduledCheck:
    """A check the daemon can run on a schedule: what it applies to, how an entry's
    warning, critical and options become its input (`prepare`, ConfigError for what it
    cannot mean), how it runs on a selection of nodes (with that input, and the state of
    a node that is down), and what its result adds beyond dbgauge_check_status
    (`metrics`, whose samples `samples` makes of a result for the nodes it looked at)."""

    name: str
    kinds: frozenset[str]
    run: Callable[[Selection, CheckInput, Status, Deadline], CheckResult]
    prepare: Callable[[Level, Level, Mapping[str, object]], CheckInput] | None = None
    metrics: tuple[MetricSpec, ...] = ()
    samples: Callable[[CheckResult, Sequence[str]], list[Sample]] = _no_samples

    def input(self, warning: Level, critical: Level,
              options: Mapping[str, object]) -> CheckInput:
        prepare = self.prepare or _takes_nothing(self.name)
        return prepare(warning, critical, options)


def scheduled_health(check: HealthCheck) -> ScheduledCheck:
    """A health check as the daemon schedules it: an entry's warning, critical and
    options read as its command line's (`checks.health.options`)."""
    def run(nodes: Selection, given: CheckInput, down: Status,
            deadline: Deadline) -> CheckResult:
        return run_health(check, nodes, given.limits, down=down, deadline=deadline,
                          scope=given.scope)

    return ScheduledCheck(check.name, check.kinds, run,
                          lambda warning, critical, options: entry_input(
                              check, warning, critical, options))


def validate_check_job(checks: Mapping[str, ScheduledCheck], check: str, warning: Level,
                       critical: Level, options: Mapping[str, object] | None = None) -> None:
    """Config-time validation of a `checks:` entry (raises ValueError for pydantic)."""
    if check not in checks:
        raise ValueError(f"unknown check {check!r}; available: {', '.join(checks)}")
    try:
        checks[check].input(warning, critical, options or {})
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


def node_statuses(result: CheckResult, nodes: Sequence[str]) -> dict[str, Status]:
    """Each node's worst finding (OK without one); findings on no node go to ''."""
    out = {name: Status.OK for name in nodes}
    for f in result.findings:
        out[f.node] = worst((out.get(f.node, Status.OK), f.severity))
    return out


def result_samples(check: ScheduledCheck, result: CheckResult, nodes: Sequence[str]
                   ) -> list[Sample]:
    """The samples one check run yields (pure: unit-tested without a daemon)."""
    statuses = node_statuses(result, nodes)
    return [*(Sample(STATUS.name, float(status), {"check": check.name, "target": target})
              for target, status in statuses.items()),
            *check.samples(result, list(statuses))]


def _numbered(bases: Iterable[str], separator: str) -> list[str]:
    """Job names: each base as it is, then base<separator>2, 3... for repeats."""
    seen: Counter[str] = Counter()
    names = []
    for base in bases:
        seen[base] += 1
        names.append(base if seen[base] == 1 else f"{base}{separator}{seen[base]}")
    return names


class CheckJob(Job):
    """One `checks:` entry of the config, run by the daemon every `interval` seconds."""

    def __init__(self, name: str, entry: CheckJobConfig, config: Config,
                 check: ScheduledCheck) -> None:
        self.name = name
        self.interval = entry.interval
        self.entry = entry
        self.config = config
        self.check = check
        self.metrics = (STATUS, *check.metrics)
        # validated when the config loaded: read once
        self.given = check.input(entry.warning, entry.critical, entry.options)

    def nodes(self) -> Selection:
        """The entry's targets (every configured one if it names none), less configured
        targets of kinds the check does not apply to."""
        chosen = select(self.entry.targets or (), (), self.config.all_targets())
        return Selection(tuple(n for n in chosen.targets
                               if n.kind in self.check.kinds or n.name in chosen.named),
                         chosen.named)

    def run(self) -> Iterable[Sample]:
        nodes = per_database(self.nodes(), self.given.dbnames)  # NODE/DATABASE, as -d gives
        timeout = self.entry.timeout
        result = self.check.run(nodes, self.given, Status[self.entry.unreachable_state.upper()],
                                Deadline.within(timeout, f"{timeout:g} s (the job's timeout)"))
        return result_samples(self.check, result, [n.name for n in nodes.targets])


def check_jobs(config: Config, checks: Mapping[str, ScheduledCheck]) -> list[Job]:
    """One job per `checks:` entry: 'check:NAME', then 'check:NAME#2', ... for repeats."""
    names = _numbered((f"check:{entry.check}" for entry in config.checks), "#")
    return [CheckJob(name, entry, config, checks[entry.check])
            for name, entry in zip(names, config.checks, strict=True)]


class ChecksumJob(Job):
    """One `checksums:` entry: compare its replicas with its source every interval."""

    metrics = CHECKSUM_METRICS

    def __init__(self, name: str, spec: ChecksumJobConfig, source: Target,
                 replicas: Sequence[Target]) -> None:
        self.name = name
        self.interval = spec.interval
        self.source = source
        self.replicas = list(replicas)
        self.options = ChecksumOptions(
            tables=tuple(spec.tables or ()), exclude=tuple(spec.exclude), method=spec.method,
            chunk_time=spec.chunk_time, whole_table_time=spec.whole_table_time,
            max_lag=spec.max_lag, max_pause=spec.max_wait, wait_timeout=spec.max_wait,
            allow_read_only=spec.allow_read_only, keep_state=False,
            different_databases=spec.different_databases)

    def run(self) -> Iterable[Sample]:
        result = run_checksum(self.source, self.replicas, self.options,
                              LogReporter(logging.DEBUG))
        return checksum_samples(self.name, result, time.time())


def checksum_jobs(config: Config) -> list[Job]:
    """One job per `checksums:` entry, named `checksum:<source>` (`:2`, `:3`... when one
    source has several entries)."""
    names = _numbered((f"checksum:{spec.source}" for spec in config.checksums), ":")
    return [ChecksumJob(name, spec, config.target(spec.source),
                        [config.target(r) for r in spec.replicas])
            for name, spec in zip(names, config.checksums, strict=True)]
