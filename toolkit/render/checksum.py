"""What `dbgauge checksum` prints: the text (one line per table, the rows that differ,
notes, the repair statements of --print-repair, a verdict line) or the JSON report.

Both are made from the run's CheckResult alone: its evidence holds every table's counts,
exact timings and repair scripts, so the two always say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.render.text import one_line
from dbgauge.toolkit.result import CheckResult

_DIGITS = 3  # the JSON report's seconds: milliseconds


def render_checksum_json(result: CheckResult) -> str:
    """The JSON report: the evidence with seconds in milliseconds and the repair scripts
    gathered per replica (`{"repair": {replica: [statements...]}}`, only when any)."""
    doc = dict(result.evidence)
    repair: dict[str, list[str]] = {}
    tables = []
    for t in doc["tables"]:
        for replica, statements in t["repair"]:
            repair.setdefault(replica, []).extend(statements)
        tables.append({k: round(v, _DIGITS) if k == "seconds" else v
                       for k, v in t.items() if k != "repair"})
    doc.update(seconds=round(doc["seconds"], _DIGITS), tables=tables)
    if repair:
        doc["repair"] = repair
    return json.dumps(doc, indent=2)


def render_checksum_error_json(message: str) -> str:
    """The JSON report of a run that could not check at all (exit 2): the report's shape
    with status "error", no tables, and the error (credentials redacted)."""
    return json.dumps({"status": "error", "error": redact(message), "tables": [],
                       "notes": []}, indent=2)


def render_checksum(result: CheckResult) -> str:
    """The per-table summary of a checksum run. Every name, key value, reason and note is
    shown by `one_line`: a table called "a<newline>b" stays on its own line."""
    doc = result.evidence
    tables: Sequence[Mapping[str, Any]] = doc["tables"]
    lines = [f"checksum of {', '.join(one_line(r) for r in doc['replicas'])} against "
             f"{one_line(doc['source'])} (method {doc['method']})"]
    names = {t["table"]: one_line(t["table"]) for t in tables}
    width = max([len("TABLE"), *(len(n) for n in names.values())])
    lines.append(f"{'TABLE':<{width}}  {'ROWS':>10}  {'CHUNKS':>6}  {'DIFF_CHUNKS':>11}  "
                 f"{'DIFF_ROWS':>9}  {'TIME':>7}  STATUS")
    for t in tables:
        lines += _table_lines(t, names[t["table"]], width)
    lines += [f"note: {one_line(n)}" for n in doc["notes"]]
    for t in tables:
        for _replica, statements in t["repair"]:
            lines.append("")
            lines += statements
    drifted = sum(1 for t in tables if t["status"] == "drift")
    unchecked = sum(1 for t in tables if t["status"] == "unchecked")
    verdict = {"ok": "no drift", "drift": f"DRIFT in {drifted} table(s)",
               "error": f"{unchecked} table(s) could not be checked" if tables
               else "NOTHING COMPARED"}[doc["status"]]
    lines.append(f"{verdict} ({len(tables)} table(s), {doc['seconds']:.2f} s)")
    return "\n".join(lines)


def _table_lines(t: Mapping[str, Any], name: str, width: int) -> list[str]:
    """One table's line, and below it its reason, differences and notes."""
    chunks = sum(t["differing_chunks"].values())
    unnamed = t.get("unnamed_differences", [])
    # A keyless table's differing rows are unknown, not 0.
    rows = "?" if unnamed else str(sum(t["differing_rows"].values()))
    lines = [f"{name:<{width}}  {t['rows']:>10}  {t['chunks']:>6}  "
             f"{chunks:>11}  {rows:>9}  {t['seconds']:>6.2f}s  {t['status']}"]
    if t["reason"]:
        lines.append(f"  {one_line(t['reason'])}")
    lines += [f"  {one_line(u['replica'])}: the table differs, {one_line(u['detail'])}"
              for u in unnamed]
    for d in t["differences"]:
        key = ", ".join(f"{one_line(col)}={one_line(str(value))}"
                        for col, value in d["key"].items())
        columns = (f" (columns: {', '.join(one_line(c) for c in d['columns'])})"
                   if d.get("columns") else "")
        lines.append(f"  {one_line(d['replica'])}: {d['kind']} {key}{columns}")
        lines += [f"      {one_line(col)}: source {json.dumps(v['source'], ensure_ascii=False)}, "
                  f"replica {json.dumps(v['replica'], ensure_ascii=False)}"
                  for col, v in d.get("values", {}).items()]
    shown = dict.fromkeys(t["differing_rows"], 0)
    for d in t["differences"]:
        shown[d["replica"]] = shown.get(d["replica"], 0) + 1
    for replica, count in t["differing_rows"].items():
        if count > shown.get(replica, 0):
            lines.append(f"  {one_line(replica)}: ... and {count - shown[replica]} more rows")
    lines += [f"  note: {one_line(n)}" for n in t["notes"]]
    return lines
