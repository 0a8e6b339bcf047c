"""The monitoring-plugin rendering of a check result: `NAME STATE - summary | perfdata`,
then one line per finding; or the same as JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Mapping

from toolkit.result import CheckResult

# Perfdata units by metric-name suffix (monitoring-plugins UOM: s, %, B or none).
_UOM = (("_seconds", "s"), ("_percent", "%"), ("_bytes", "B"))


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
