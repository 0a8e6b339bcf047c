"""What the validate tests share: the fixture corpus, expected-findings files, golden
files, and readers of captured client output."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from dbgauge.toolkit.result import Finding, Severity, severity_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "validate"


def read_expected(directory: Path, reviewed: bool = False) -> tuple[dict[str, str], list[str]]:
    """(options from the '# options:' header, sorted expected lines) of expected.txt.

    A line may end in ' -- why it is true'; with `reviewed` every line must.
    """
    options: dict[str, str] = {}
    lines = []
    for raw in (directory / "expected.txt").read_text().splitlines():
        if raw.startswith("# options:"):
            options = dict(part.split("=", 1) for part in raw.split(":", 1)[1].split())
        elif raw.strip() and not raw.startswith("#"):
            line, sep, why = raw.partition(" -- ")
            assert not reviewed or (sep and why.strip()), f"{directory.name}: no reason " \
                f"given for {raw!r}"
            lines.append(line.strip())
    return options, sorted(lines)


def finding_lines(findings: list[Finding] | tuple[Finding, ...], base: Path) -> list[str]:
    """Errors and warnings as 'severity file:line rule key', files relative to `base`."""
    out = []
    for f in findings:
        sev = severity_of(f)
        if sev == Severity.INFO:
            continue
        rel = os.path.relpath(f.file, base) if f.file else "-"
        out.append(f"{sev.value} {rel}:{f.line or '-'} {f.kind} {f.key or '-'}")
    return sorted(out)


def json_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a '# header' + one-JSON-object-per-line fixture."""
    return [json.loads(line) for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def mysql_table_rows(path: Path) -> list[dict[str, str]]:
    """Rows of mysql client output, in either table (+---+) or vertical (\\G) form."""
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    rows: list[dict[str, str]] = []
    if lines and lines[0].startswith("*"):
        current: dict[str, str] | None = None
        for ln in lines:
            if ln.startswith("*"):
                current = {}
                rows.append(current)
            elif current is not None and ":" in ln:
                key, _, value = ln.partition(":")
                current[key.strip()] = value.strip()
        return rows
    table = [ln for ln in lines if ln.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    for ln in table[1:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def as_plain(obj: Any) -> Any:
    """Dataclasses (and tuples of them) as JSON-friendly data, for golden files."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"type": type(obj).__name__,
                **{f.name: as_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
    if isinstance(obj, tuple | list):
        return [as_plain(x) for x in obj]
    return obj


def check_golden(path: Path, data: Any) -> None:
    """Compare with a golden JSON file; DBGAUGE_UPDATE_GOLDEN=1 rewrites it."""
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get("DBGAUGE_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.read_text() == text, f"{path} differs (DBGAUGE_UPDATE_GOLDEN=1 to refresh)"
