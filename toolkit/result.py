"""What every check, checksum and validator returns: one frozen result type.

A check returns a `CheckResult` (status, summary, findings with severity and evidence,
perfdata, and structured evidence of the whole run); text, JSON, SARIF, the
monitoring-plugin line, exit codes and metrics are renderings of it (`toolkit.render`,
`dbgauge.cli`). Validators speak in severity words (error, warning, info) that map onto
the monitoring-plugin states, so a validation result is also a check result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any


class Status(IntEnum):
    """Monitoring-plugin states: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""

    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3


Perfdata = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Finding:
    """One thing a check found, on one node, with the evidence for it."""

    severity: Status
    node: str
    kind: str
    detail: str
    evidence: Mapping[str, str] = field(default_factory=dict)
    # Where a configuration finding points (validators), and how to fix it.
    file: str | None = None
    line: int | None = None
    key: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class CheckResult:
    """What a check concluded; the worst finding decides the status.

    `evidence` is the run's structured evidence beyond its findings, JSON-ready (a
    checksum's per-table counts and timings); renderings that need it read it from here.
    """

    name: str
    status: Status
    summary: str
    findings: tuple[Finding, ...] = ()
    perfdata: Perfdata = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)


# Which state wins when findings disagree: a critical problem outranks "could not tell",
# which outranks a warning (an unreachable node must never be reported as OK).
_RANK = {Status.OK: 0, Status.WARNING: 1, Status.UNKNOWN: 2, Status.CRITICAL: 3}


def worst(statuses: Iterable[Status]) -> Status:
    """The state a multi-node check reports: CRITICAL > UNKNOWN > WARNING > OK."""
    return max(statuses, key=_RANK.__getitem__, default=Status.OK)


def plugin_result(name: str, findings: Iterable[Finding], summary: str,
                  perfdata: Iterable[tuple[str, float]] = ()) -> CheckResult:
    """A check result whose status is its worst finding; findings worst first."""
    ordered = tuple(sorted(findings, key=lambda f: (-_RANK[f.severity], f.node, f.kind)))
    return CheckResult(name=name, status=worst(f.severity for f in ordered), summary=summary,
                       findings=ordered, perfdata=tuple(perfdata))


def perf_label(node: str, metric: str) -> str:
    """Perfdata label for one node's metric; the metric's suffix gives the unit."""
    return f"{node}:{metric}"


# ----------------------------------------------------------------- validators' words


class Severity(StrEnum):
    """What a configuration finding means for the deployment."""

    ERROR = "error"  # the server refuses to start, or is unsafe / broken as configured
    WARNING = "warning"  # works, but surprises someone later
    INFO = "info"  # worth knowing; never fails a run

    @property
    def status(self) -> Status:
        return _STATUS[self]


_STATUS = {Severity.ERROR: Status.CRITICAL, Severity.WARNING: Status.WARNING,
           Severity.INFO: Status.OK}
_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def severity_of(finding: Finding) -> Severity:
    """The severity word of a finding (UNKNOWN counts as an error)."""
    if finding.severity in (Status.CRITICAL, Status.UNKNOWN):
        return Severity.ERROR
    if finding.severity == Status.WARNING:
        return Severity.WARNING
    return Severity.INFO


def finding(severity: Severity, rule: str, message: str, *, node: str = "",
            file: str | None = None, line: int | None = None, key: str | None = None,
            fix: str | None = None, evidence: Mapping[str, str] | None = None) -> Finding:
    """Build one configuration finding; `rule` is a stable id such as 'pgbouncer/bad-value'."""
    return Finding(severity=severity.status, node=node or (file or ""), kind=rule,
                   detail=message, evidence=dict(evidence or {}), file=file, line=line,
                   key=key, fix=fix)


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Errors first, then by file and line, so output is stable and readable."""
    return tuple(sorted(findings, key=lambda f: (_ORDER[severity_of(f)], f.file or "~",
                                                 f.line or 0, f.kind, f.key or "")))


def count(findings: Iterable[Finding]) -> dict[Severity, int]:
    """Findings per severity word, every word present."""
    out = dict.fromkeys(Severity, 0)
    for f in findings:
        out[severity_of(f)] += 1
    return out


def config_result(name: str, findings: Iterable[Finding]) -> CheckResult:
    """Wrap a validator's findings in a CheckResult: the worst finding decides the status."""
    ordered = sort_findings(findings)
    counts = count(ordered)
    status = Status.OK
    if counts[Severity.ERROR]:
        status = Status.CRITICAL
    elif counts[Severity.WARNING]:
        status = Status.WARNING
    summary = (f"{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s), "
               f"{counts[Severity.INFO]} info")
    return CheckResult(name=name, status=status, summary=summary, findings=ordered)
