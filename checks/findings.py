"""Configuration findings shared by the validators, and their renderings.

A validator returns a `CheckResult` whose findings carry a file, line, key and fix.
Severity words map onto the monitoring-plugin states so a validation result is also a
check result: error -> CRITICAL, warning -> WARNING, info -> OK. Text, JSON and SARIF
2.1.0 (for CI code scanning) are pure renderings of that one result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from checks import CheckResult, Finding, Status
from toolkit import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class Severity(StrEnum):
    """What a finding means for the deployment."""

    ERROR = "error"  # the server refuses to start, or is unsafe / broken as configured
    WARNING = "warning"  # works, but surprises someone later
    INFO = "info"  # worth knowing; never fails a run

    @property
    def status(self) -> Status:
        return _STATUS[self]


_STATUS = {Severity.ERROR: Status.CRITICAL, Severity.WARNING: Status.WARNING,
           Severity.INFO: Status.OK}
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
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


def config_result(name: str, findings: Iterable[Finding]) -> CheckResult:
    """Wrap findings in a CheckResult: the worst finding decides the status."""
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


def count(findings: Iterable[Finding]) -> dict[Severity, int]:
    out = dict.fromkeys(Severity, 0)
    for f in findings:
        out[severity_of(f)] += 1
    return out


def exit_code(result: CheckResult, *, strict: bool = False) -> int:
    """0: no errors; 1: errors (or warnings with --strict). 2 is raised, not returned."""
    counts = count(result.findings)
    if counts[Severity.ERROR] or (strict and counts[Severity.WARNING]):
        return 1
    return 0


def _where(f: Finding) -> str:
    if f.file and f.line:
        return f"{f.file}:{f.line}"
    return f.file or f.node or "-"


def render_text(result: CheckResult) -> str:
    """One line per finding (`file:line: severity [rule] key: message`), fix indented."""
    lines = []
    for f in result.findings:
        key = f"{f.key}: " if f.key else ""
        lines.append(f"{_where(f)}: {severity_of(f).value} [{f.kind}] {key}{f.detail}")
        if f.fix:
            lines.append(f"    fix: {f.fix}")
    lines.append(f"{result.name}: {result.summary}")
    return "\n".join(lines) + "\n"


def finding_dict(f: Finding) -> dict[str, Any]:
    return {"severity": severity_of(f).value, "rule": f.kind, "file": f.file, "line": f.line,
            "key": f.key, "message": f.detail, "fix": f.fix, "node": f.node,
            "evidence": dict(f.evidence)}


def render_json(result: CheckResult) -> str:
    counts = count(result.findings)
    doc = {"name": result.name, "status": result.status.name, "summary": result.summary,
           "counts": {s.value: n for s, n in counts.items()},
           "findings": [finding_dict(f) for f in result.findings]}
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def _artifact_uri(path: str, base: Path) -> tuple[str, bool]:
    """A path relative to `base` when inside it (code scanning resolves those), else file:// URI."""
    p = Path(path)
    try:
        rel = p.resolve().relative_to(base.resolve())
        return rel.as_posix(), True
    except (ValueError, OSError):
        return (p.resolve().as_uri() if p.is_absolute() or p.exists() else p.as_posix()), False


def render_sarif(result: CheckResult, rules: Mapping[str, str], *,
                 base: Path | None = None, fallback_file: str | None = None) -> str:
    """SARIF 2.1.0: one run, one rule per finding kind, locations as file + startLine.

    Live findings without a file point at `fallback_file` (the validated file, line 1)
    because code scanning rejects results without a location.
    """
    base = base or Path(os.getcwd())
    kinds = sorted({f.kind for f in result.findings})
    rule_index = {k: i for i, k in enumerate(kinds)}
    sarif_rules = [{"id": k, "name": k.replace("/", "."),
                    "shortDescription": {"text": rules.get(k, k)}} for k in kinds]
    results = []
    for f in result.findings:
        text = f.detail + (f" Fix: {f.fix}" if f.fix else "")
        if f.key:
            text = f"{f.key}: {text}"
        entry: dict[str, Any] = {"ruleId": f.kind, "ruleIndex": rule_index[f.kind],
                                 "level": _SARIF_LEVEL[severity_of(f)],
                                 "message": {"text": text}}
        path = f.file or fallback_file
        if path:
            uri, relative = _artifact_uri(path, base)
            artifact: dict[str, Any] = {"uri": uri}
            if relative:
                artifact["uriBaseId"] = "%SRCROOT%"
            line = f.line if (f.file and f.line and f.line > 0) else 1
            entry["locations"] = [{"physicalLocation": {"artifactLocation": artifact,
                                                        "region": {"startLine": line}}}]
        results.append(entry)
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": "dbgauge", "version": __version__,
                                         "rules": sarif_rules}},
                     "originalUriBaseIds": {"%SRCROOT%": {"uri": base.resolve().as_uri() + "/"}},
                     "results": results}]}
    return json.dumps(doc, indent=2) + "\n"


def render(result: CheckResult, fmt: str, rules: Mapping[str, str],
           fallback_file: str | None = None) -> str:
    if fmt == "json":
        return render_json(result)
    if fmt == "sarif":
        return render_sarif(result, rules, fallback_file=fallback_file)
    return render_text(result)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The closest known name, for 'unknown key' messages."""
    import difflib

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


# --- monitoring-plugin rendering, shared by `dbgauge check` commands (issue 6) ---

# Which state wins when findings disagree: a critical problem outranks "could not tell",
# which outranks a warning (an unreachable node must never be reported as OK).
_PLUGIN_RANK = {Status.OK: 0, Status.WARNING: 1, Status.UNKNOWN: 2, Status.CRITICAL: 3}
# Perfdata units by metric-name suffix (monitoring-plugins UOM: s, %, B or none).
_UOM = (("_seconds", "s"), ("_percent", "%"), ("_bytes", "B"))


def worst(statuses: Iterable[Status]) -> Status:
    """The state a multi-node check reports: CRITICAL > UNKNOWN > WARNING > OK."""
    return max(statuses, key=_PLUGIN_RANK.__getitem__, default=Status.OK)


def plugin_result(name: str, findings: Iterable[Finding], summary: str,
                  perfdata: Iterable[tuple[str, float]] = ()) -> CheckResult:
    """A check result whose status is its worst finding; findings worst first."""
    ordered = tuple(sorted(findings, key=lambda f: (-_PLUGIN_RANK[f.severity], f.node,
                                                   f.kind)))
    return CheckResult(name=name, status=worst(f.severity for f in ordered), summary=summary,
                       findings=ordered, perfdata=tuple(perfdata))


def perf_label(node: str, metric: str) -> str:
    """Perfdata label for one node's metric; the metric's suffix gives the unit."""
    return f"{node}:{metric}"


def _perf(label: str, value: float, thresholds: Mapping[str, tuple[float, float]]) -> str:
    metric = label.rpartition(":")[2]
    uom = next((u for suffix, u in _UOM if metric.endswith(suffix)), "")
    text = f"{value:.6f}".rstrip("0").rstrip(".") or "0"
    out = f"'{label.replace(chr(39), '')}'={text}{uom}"
    if metric in thresholds:
        warning, critical = thresholds[metric]
        out += f";{warning:g};{critical:g}"
    return out


def render_plugin(result: CheckResult,
                  thresholds: Mapping[str, tuple[float, float]] | None = None) -> str:
    """`NAME STATE - summary | perfdata`, then one line per finding and its fix hint.

    `thresholds` maps a perfdata metric (e.g. 'lag_seconds') to (warning, critical),
    appended as ';warn;crit' so graphing add-ons draw them.
    """
    line = f"{result.name.upper()} {result.status.name} - {result.summary}"
    perf = [_perf(label, value, thresholds or {}) for label, value in result.perfdata]
    if perf:
        line += " | " + " ".join(perf)
    lines = [line]
    for f in result.findings:
        lines.append(f"{f.severity.name} {f.node or '-'} [{f.kind}] {f.detail}")
        lines += [f"    {key}: {value}" for key, value in f.evidence.items()]
        if f.fix:
            lines.append(f"    fix (not run by dbgauge): {f.fix}")
    return "\n".join(lines) + "\n"


def render_plugin_json(result: CheckResult) -> str:
    """{"status", "summary", "findings": [{"severity", "node", "kind", "detail", ...}]}."""
    doc = {"check": result.name, "status": result.status.name, "summary": result.summary,
           "findings": [{"severity": f.severity.name, "node": f.node, "kind": f.kind,
                         "detail": f.detail, "evidence": dict(f.evidence), "fix": f.fix}
                        for f in result.findings],
           "perfdata": {label: value for label, value in result.perfdata}}
    return json.dumps(doc, indent=2) + "\n"
