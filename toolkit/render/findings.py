"""Validators' renderings: text (`file:line: severity [rule] key: message`), JSON, and
SARIF 2.1.0 for CI code scanning; all pure renderings of one CheckResult."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbgauge.toolkit import __version__
from dbgauge.toolkit.redact import redact, redact_data
from dbgauge.toolkit.result import CheckResult, Finding, Severity, count, severity_of

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


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
    return redact("\n".join(lines) + "\n")


def finding_dict(f: Finding) -> dict[str, Any]:
    return {"severity": severity_of(f).value, "rule": f.kind, "file": f.file, "line": f.line,
            "key": f.key, "message": f.detail, "fix": f.fix, "node": f.node,
            "evidence": dict(f.evidence)}


def render_json(result: CheckResult) -> str:
    counts = count(result.findings)
    doc = {"name": result.name, "status": result.status.name, "summary": result.summary,
           "counts": {s.value: n for s, n in counts.items()},
           "findings": [finding_dict(f) for f in result.findings]}
    return json.dumps(redact_data(doc), indent=2, sort_keys=False) + "\n"


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
    return json.dumps(redact_data(doc), indent=2) + "\n"


def render(result: CheckResult, fmt: str, rules: Mapping[str, str],
           fallback_file: str | None = None) -> str:
    if fmt == "json":
        return render_json(result)
    if fmt == "sarif":
        return render_sarif(result, rules, fallback_file=fallback_file)
    return render_text(result)
