"""Checks return data, the CLI renders it.

A check returns a frozen `CheckResult` (status, summary, findings with severity and
evidence); text, JSON, exit codes and metrics are renderings of it. The checks
themselves (drift, split_brain, health, config_*) each live in their own module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Status(IntEnum):
    """Monitoring-plugin states; the value is the exit code."""

    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3


@dataclass(frozen=True)
class Finding:
    """One thing a check found, on one node, with the evidence for it."""

    severity: Status
    node: str
    kind: str
    detail: str
    evidence: dict[str, str] = field(default_factory=dict)
    # Where a configuration finding points (validators), and how to fix it.
    file: str | None = None
    line: int | None = None
    key: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class CheckResult:
    """What a check concluded: the worst finding decides the status."""

    name: str
    status: Status
    summary: str
    findings: tuple[Finding, ...] = ()
    perfdata: tuple[tuple[str, float], ...] = ()
