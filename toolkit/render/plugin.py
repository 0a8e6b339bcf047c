"""The monitoring-plugin rendering of a check result: `NAME STATE - summary | perfdata`,
then one line per finding; or the same as JSON for machines.

Perfdata follows the monitoring-plugins guidelines: `'label'=value[UOM];warn;crit;min;max`,
the unit from the metric's suffix (`_seconds` s, `_percent` % with min 0 and max 100,
`_bytes` B, `_total` c), warn/crit as ranges (toolkit.ranges), labels quoted with an
embedded quote doubled. Bytes are whole, as check_postgres prints them: a size threshold
such as `1.1 TB` (1209462790553.6 bytes) shows the whole bytes that alert the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dbgauge.toolkit.ranges import parse_range
from dbgauge.toolkit.redact import redact, redact_data
from dbgauge.toolkit.result import CheckResult

# metric-name suffix -> (UOM, min, max)
_UOM: tuple[tuple[str, str, float | None, float | None], ...] = (
    ("_seconds", "s", None, None),
    ("_percent", "%", 0.0, 100.0),
    ("_bytes", "B", 0.0, None),
    ("_total", "c", 0.0, None),
)

# metric -> (warning range, critical range), as the guideline text: "30", "600:", "@1:2"
# (None: that level is not on this metric, e.g. a count threshold of a percentage check)
Thresholds = Mapping[str, tuple[str | None, str | None]]


@dataclass(frozen=True)
class PerfValue:
    """One perfdata value with everything the guidelines let it carry."""

    label: str
    value: float
    unit: str = ""
    warn: str | None = None
    crit: str | None = None
    min: float | None = None
    max: float | None = None


def perf_value(label: str, value: float, thresholds: Thresholds) -> PerfValue:
    """Unit, min/max and thresholds of `node:metric` from the metric's name."""
    metric = label.rpartition(":")[2]
    unit, low, high = next(((u, lo, hi) for suffix, u, lo, hi in _UOM
                            if metric.endswith(suffix)), ("", None, None))
    warn, crit = thresholds.get(metric, (None, None))
    if unit == "B":
        value, warn, crit = float(round(value)), _whole(warn), _whole(crit)
    return PerfValue(label, value, unit, warn, crit, low, high)


def _whole(spec: str | None) -> str | None:
    """A range of bytes in whole bytes that alert as it does on a count of bytes: its
    end rounded down, its start up (`1209462790553.6` alerts above 1209462790553)."""
    if spec is None:
        return None
    try:
        rng = parse_range(spec)
    except ValueError:
        return spec
    return replace(rng, start=math.ceil(rng.start) if math.isfinite(rng.start) else rng.start,
                   end=math.floor(rng.end) if math.isfinite(rng.end) else rng.end).plain


def _num(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def quote_label(label: str) -> str:
    """Quoted per the guidelines: `'` doubled inside the quotes; `=` cannot appear."""
    return "'" + label.replace("=", "_").replace("'", "''") + "'"


def render_perf(perf: PerfValue) -> str:
    """`'label'=value[UOM];warn;crit;min;max`, trailing empty fields dropped."""
    fields = [perf.warn or "", perf.crit or "",
              "" if perf.min is None else _num(perf.min),
              "" if perf.max is None else _num(perf.max)]
    while fields and not fields[-1]:
        fields.pop()
    return ";".join([f"{quote_label(perf.label)}={_num(perf.value)}{perf.unit}", *fields])


def render_plugin(result: CheckResult, thresholds: Thresholds | None = None,
                  verbosity: int = 0) -> str:
    """`NAME STATE - summary | perfdata`, then one line per finding and its fix hint.

    `thresholds` maps a perfdata metric (e.g. 'lag_seconds') to its (warning, critical)
    ranges, appended as ';warn;crit' so graphing add-ons draw them. `verbosity` (-v) 1
    adds each node's reading, 2 also the thresholds in use.
    """
    line = redact(f"{result.name.upper()} {result.status.name} - {result.summary}")
    perf = [render_perf(perf_value(label, value, thresholds or {}))
            for label, value in result.perfdata]
    if perf:  # names and numbers: no secret, and `'node:metric'=1;@0:10` is no userinfo
        line += " | " + " ".join(perf)
    lines: list[str] = []
    for f in result.findings:
        lines.append(f"{f.severity.name} {f.node or '-'} [{f.kind}] {f.detail}")
        lines += [f"    {key}: {value}" for key, value in f.evidence.items()]
        if f.fix:
            lines.append(f"    fix (not run by dbgauge): {f.fix}")
    if verbosity >= 1:
        lines += [f"node {n['node']}: {n['status']}, {n['note']}"
                  for n in result.evidence.get("nodes", ())]
    if verbosity >= 2:
        lines += [f"thresholds {metric}: warning {w or '-'}, critical {c or '-'}"
                  for metric, (w, c) in (thresholds or {}).items()]
    return "\n".join([line, *redact("\n".join(lines)).splitlines()]) + "\n"


def render_plugin_json(result: CheckResult, thresholds: Thresholds | None = None) -> str:
    """{"status", "summary", "findings": [...], "perfdata": {label: {value, unit, warn,
    crit, min, max}}}."""
    perfdata: dict[str, dict[str, Any]] = {}
    for label, value in result.perfdata:
        p = perf_value(label, value, thresholds or {})
        perfdata[label] = {"value": p.value, "unit": p.unit, "warn": p.warn, "crit": p.crit,
                           "min": p.min, "max": p.max}
    doc = {"check": result.name, "status": result.status.name, "summary": result.summary,
           "findings": [{"severity": f.severity.name, "node": f.node, "kind": f.kind,
                         "detail": f.detail, "evidence": dict(f.evidence), "fix": f.fix}
                        for f in result.findings],
           "perfdata": perfdata}
    return json.dumps(redact_data(doc), indent=2) + "\n"
