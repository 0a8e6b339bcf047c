"""The text `dbgauge checksum` prints: one line per table, the rows that differ, notes, the
repair statements (--print-repair) and a verdict line.

Made from the run's CheckResult alone: its evidence is the JSON report (what
`--format json` prints), so the text says exactly what the JSON says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolkit.result import CheckResult

# Each repair script opens with a line naming its replica and table (checks.drift.repair):
# "-- dbgauge checksum: make REPLICA match the source for SCHEMA.TABLE; review, ...".
_HEADER = "-- dbgauge checksum: make {replica} match the source for "


def render_checksum(result: CheckResult) -> str:
    """The per-table summary of a checksum run (JSON is `result.evidence`)."""
    doc = result.evidence
    tables: Sequence[Mapping[str, Any]] = doc["tables"]
    lines = [f"checksum of {', '.join(doc['replicas'])} against {doc['source']} "
             f"(method {doc['method']})"]
    width = max([len("TABLE"), *(len(t["table"]) for t in tables)])
    lines.append(f"{'TABLE':<{width}}  {'ROWS':>10}  {'CHUNKS':>6}  {'DIFF_CHUNKS':>11}  "
                 f"{'DIFF_ROWS':>9}  {'TIME':>7}  STATUS")
    for t in tables:
        chunks = sum(t["differing_chunks"].values())
        rows = sum(t["differing_rows"].values())
        lines.append(f"{t['table']:<{width}}  {t['rows']:>10}  {t['chunks']:>6}  "
                     f"{chunks:>11}  {rows:>9}  {t['seconds']:>6.2f}s  {t['status']}")
        if t["reason"]:
            lines.append(f"  {t['reason']}")
        for d in t["differences"]:
            key = ", ".join(f"{col}={value}" for col, value in d["key"].items())
            lines.append(f"  {d['replica']}: {d['kind']} {key}")
        shown = dict.fromkeys(t["differing_rows"], 0)
        for d in t["differences"]:
            shown[d["replica"]] = shown.get(d["replica"], 0) + 1
        for name, count in t["differing_rows"].items():
            if count > shown.get(name, 0):
                lines.append(f"  {name}: ... and {count - shown[name]} more rows")
        lines += [f"  note: {n}" for n in t["notes"]]
    lines += [f"note: {n}" for n in doc["notes"]]
    for statements in _scripts_by_table(doc):
        lines.append("")
        lines += statements
    drifted = sum(1 for t in tables if t["status"] == "drift")
    unchecked = sum(1 for t in tables if t["status"] == "unchecked")
    verdict = {"ok": "no drift", "drift": f"DRIFT in {drifted} table(s)",
               "error": f"{unchecked} table(s) could not be checked"}[doc["status"]]
    lines.append(f"{verdict} ({len(tables)} table(s), {doc['seconds']:.2f} s)")
    return "\n".join(lines)


def _scripts_by_table(doc: Mapping[str, Any]) -> list[list[str]]:
    """The repair scripts table by table, each table's replicas in the order its rows are
    listed. The JSON holds each replica's scripts one after the other, in table order;
    every script opens with its header line, which names the replica and the table."""
    queues: dict[str, list[list[str]]] = {}
    for replica, statements in doc.get("repair", {}).items():
        scripts = queues.setdefault(replica, [])
        header = _HEADER.format(replica=replica)
        for statement in statements:
            if statement.startswith(header) or not scripts:
                scripts.append([])
            scripts[-1].append(statement)
    out: list[list[str]] = []
    for t in doc["tables"]:
        replicas = dict.fromkeys([d["replica"] for d in t["differences"]]
                                 + list(t["differing_rows"]))
        for replica in replicas:
            queue = queues.get(replica)
            header = _HEADER.format(replica=replica) + f"{t['table']}; "
            if queue and queue[0][0].startswith(header):
                out.append(queue.pop(0))
    out += [script for queue in queues.values() for script in queue]  # none expected
    return out
