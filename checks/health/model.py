"""What every health check shares: thresholds, a node's outcome, and how a measured value
is judged. Pure: the checks' reads are in their own modules, the run in `run`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import Range, parse_range
from dbgauge.toolkit.result import Finding, Status, perf_label, worst
from dbgauge.toolkit.targets import Target


@dataclass(frozen=True)
class Thresholds:
    """Warning/critical ranges of a check (monitoring-plugin range syntax, toolkit.ranges):
    CRITICAL when the critical range alerts, else WARNING when the warning range does."""

    warning: Range
    critical: Range

    @classmethod
    def above(cls, warning: float, critical: float) -> Thresholds:
        """Alert above these levels (`-w 30 -c 120`): a value that is worse when higher."""
        return cls(Range(end=warning), Range(end=critical))

    @classmethod
    def below(cls, warning: float, critical: float) -> Thresholds:
        """Alert below these levels (`-w 600: -c 300:`): worse when lower (uptime)."""
        return cls(Range(start=warning), Range(start=critical))

    def status(self, value: float) -> Status:
        if self.critical.alerts(value):
            return Status.CRITICAL
        if self.warning.alerts(value):
            return Status.WARNING
        return Status.OK

    def override(self, warning: Range | str | float | None,
                 critical: Range | str | float | None) -> Thresholds:
        """These defaults with the user's ranges; a default that would contradict the one
        value given follows it (--critical 1 alone also means warning at 1)."""
        w = self.warning if warning is None else _as_range(warning)
        c = self.critical if critical is None else _as_range(critical)
        if _contradict(w, c):
            if warning is None:
                w = c
            elif critical is None:
                c = w
        return Thresholds(w, c)

    def validate(self, what: str) -> Thresholds:
        if _contradict(self.warning, self.critical):
            raise ConfigError(f"{what}: --warning {self.warning} is less strict than "
                              f"--critical {self.critical} (it would never warn)")
        return self


def _as_range(value: Range | str | float) -> Range:
    if isinstance(value, Range):
        return value
    try:
        return parse_range(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _contradict(warning: Range, critical: Range) -> bool:
    """A warning range that alerts later than the critical one (plain forms only)."""
    if warning.upper is not None and critical.upper is not None:
        return warning.upper > critical.upper
    if warning.lower is not None and critical.lower is not None:
        return warning.lower < critical.lower
    return False


@dataclass(frozen=True)
class NodeOutcome:
    """What a check found on one node: findings, perfdata and a short note for the summary."""

    node: str
    findings: tuple[Finding, ...] = ()
    perfdata: tuple[tuple[str, float], ...] = ()
    note: str = ""

    @property
    def status(self) -> Status:
        return worst(f.severity for f in self.findings)


class HealthCheck(Protocol):
    """One `dbgauge check NAME` health check (a module with these attributes, or a
    `Measure`)."""

    @property
    def NAME(self) -> str: ...  # module constants satisfy it

    @property
    def HELP(self) -> str: ...

    @property
    def KINDS(self) -> frozenset[str]: ...

    @property
    def DEFAULTS(self) -> Thresholds | None: ...  # None: no -w/-c

    @property
    def METRIC(self) -> str: ...  # thresholded; unit in its suffix

    def evaluate(self, node: Target, conn: Connection, limits: Thresholds | None
                 ) -> NodeOutcome:
        ...


@dataclass(frozen=True)
class Measure:
    """A thresholded check given as data, for modules that hold several (last-vacuum and
    last-analyze share their statement): `read` turns one node into a Measured value."""

    NAME: str
    HELP: str
    KINDS: frozenset[str]
    DEFAULTS: Thresholds
    METRIC: str
    KIND: str  # the finding kind when a threshold is crossed
    read: Callable[[Target, Connection], Measured | NodeOutcome]

    def evaluate(self, node: Target, conn: Connection, limits: Thresholds | None
                 ) -> NodeOutcome:
        measured = self.read(node, conn)
        if isinstance(measured, NodeOutcome):
            return measured
        return judged(node, limits or self.DEFAULTS, measured, kind=self.KIND,
                      metric=self.METRIC, extra=measured.extra)


@dataclass(frozen=True)
class Measured:
    """One node's value of a thresholded metric, with what to say about it."""

    value: float
    text: str  # e.g. "lag 0.31 s (heartbeat)"
    evidence: Mapping[str, str] = field(default_factory=dict)
    extra: Sequence[tuple[str, float]] = ()  # more perfdata (metric, value) of the node
    findings: tuple[Finding, ...] = ()  # problems beyond the threshold (a failing command)


def judged(node: Target, limits: Thresholds, measured: Measured, *, kind: str, metric: str,
           extra: Sequence[tuple[str, float]] = ()) -> NodeOutcome:
    """A NodeOutcome for one thresholded value: a finding only when it is not OK."""
    status = limits.status(measured.value)
    findings = measured.findings
    if status is not Status.OK:
        level = limits.critical if status is Status.CRITICAL else limits.warning
        findings += (Finding(status, node.name, kind,
                             f"{measured.text} (threshold {level})",
                             dict(measured.evidence)),)
    perf = ((perf_label(node.name, metric), measured.value),
            *((perf_label(node.name, m), v) for m, v in extra))
    return NodeOutcome(node.name, findings, perf, measured.text)


def not_applicable(node: Target, what: str) -> NodeOutcome:
    """A node the check has nothing to measure on (a primary for `lag`): OK, said so."""
    return NodeOutcome(node.name, note=what)
