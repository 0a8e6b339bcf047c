"""A run's per-table results as the one result type every check returns.

`checksum_result` turns the typed tables of a run into a `toolkit.result.CheckResult`:
status, findings (one per differing row and per table that could not be checked),
summary and perfdata, with the whole run as `evidence`: every table's counts, exact
timings and repair scripts. Every rendering reads it -- the JSON report and the text
(`toolkit.render.checksum`), the daemon's metrics (`checks.drift.schedule`) -- and decides
itself how much to show and how precisely.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbgauge.checks.drift.chunks import json_value
from dbgauge.checks.drift.model import TableResult
from dbgauge.toolkit.result import CheckResult, Finding, Status

# The run's status word (the JSON's "status") and the check status it maps to.
_STATUS = {"ok": Status.OK, "drift": Status.CRITICAL, "error": Status.UNKNOWN}


# Why a run that compared no table is not "no drift".
NOTHING_COMPARED = ("no table was compared: the source lists none to compare (system schemas "
                    "and dbgauge's own left out, then --tables, --exclude and the database "
                    "filters applied); nothing compared is not \"no drift\"")


def run_status(tables: Sequence[TableResult]) -> str:
    """ok, drift, or error (some table could not be checked, or none was compared)."""
    if any(t.status == "drift" for t in tables):
        return "drift"
    if not tables or any(t.status == "unchecked" for t in tables):
        return "error"
    return "ok"


def run_evidence(method: str, source: str, replicas: Sequence[str],
                 tables: Sequence[TableResult], seconds: float,
                 notes: Sequence[str]) -> dict[str, Any]:
    """The run as JSON-ready data: the report's fields, with exact seconds, and each
    table's repair scripts per replica (the JSON report merges them per replica)."""
    return {
        "status": run_status(tables), "method": method, "source": source,
        "replicas": list(replicas), "seconds": seconds,
        "tables": [{**t.to_json(), "seconds": t.seconds,
                    "repair": [[replica, list(statements)] for replica, statements in t.repair]}
                   for t in tables],
        "notes": list(notes),
    }


def checksum_result(method: str, source: str, replicas: Sequence[str],
                    tables: Sequence[TableResult], seconds: float,
                    notes: Sequence[str] = ()) -> CheckResult:
    """The run as a check result: drift is CRITICAL, a table not checked UNKNOWN, and so
    is a run that compared no table."""
    findings: list[Finding] = []
    if not tables:
        findings.append(Finding(Status.UNKNOWN, source, "checksum/nothing-compared",
                                NOTHING_COMPARED))
        notes = (*notes, NOTHING_COMPARED)
    for table in tables:
        if table.status == "unchecked":
            findings.append(Finding(Status.UNKNOWN, source, "checksum/unchecked",
                                    f"{table.table}: {table.reason}"))
        for u in table.unnamed:
            findings.append(Finding(Status.CRITICAL, u.replica, "checksum/unnamed",
                                    f"{table.table}: the table differs ({u.detail()})"))
        for d in table.differences:
            findings.append(Finding(Status.CRITICAL, d.replica, f"checksum/{d.kind}",
                                    f"{table.table}: row {d.key_text()} {d.kind}"
                                    + (f" (columns: {', '.join(d.columns)})"
                                       if d.columns else ""),
                                    {k: str(json_value(v)) for k, v in d.key}))
    drifted = sum(1 for t in tables if t.status == "drift")
    summary = (f"{len(tables)} table(s) compared, {drifted} with drift"
               if tables else "no table compared")
    return CheckResult("checksum", _STATUS[run_status(tables)], summary, tuple(findings),
                       (("tables", float(len(tables))), ("drifted_tables", float(drifted))),
                       run_evidence(method, source, replicas, tables, seconds, notes))
