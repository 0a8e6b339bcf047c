"""Scheduled checksums' metrics: the daemon runs each `checksums:` entry of the config as
a job (`checks.schedule.ChecksumJob`) and serves its last result as `dbgauge_checksum_*`
metrics (cached between runs), made here of the run's result.

A checksum reads whole tables, so it never runs on scrape: `toolkit.jobs` runs it in its
own thread every `interval` (1 h by default) and keeps the samples of the last finished run.
The per-table series exist for every compared table and replica (0 when equal), so an alert
on `dbgauge_checksum_differing_rows > 0` does not depend on a series appearing.
"""

from __future__ import annotations

from typing import Any

from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.result import CheckResult

_P = "dbgauge_checksum_"
_CACHED = " Cached from the last scheduled run (see dbgauge_job_success for failed runs)."
TABLES_CHECKED = MetricSpec(
    _P + "tables_checked", "gauge",
    "Tables the last checksum run compared between the source and its replicas." + _CACHED,
    ("dbgauge_job",))
TABLES_UNCHECKED = MetricSpec(
    _P + "tables_unchecked", "gauge",
    "Tables the last checksum run could not compare (no usable key and too large, columns "
    "that differ, no privilege)." + _CACHED, ("dbgauge_job",))
DRIFT = MetricSpec(
    _P + "drift", "gauge",
    "1 if the last checksum run found a replica whose rows differ from the source's, "
    "else 0." + _CACHED, ("dbgauge_job",))
TABLE_ROWS = MetricSpec(
    _P + "table_rows", "gauge", "Rows of the table on the source when it was checksummed."
    + _CACHED, ("dbgauge_job", "table"))
DIFFERING_CHUNKS = MetricSpec(
    _P + "differing_chunks", "gauge",
    "Chunks of the table whose checksum differs on the replica." + _CACHED,
    ("dbgauge_job", "table", "replica"))
DIFFERING_ROWS = MetricSpec(
    _P + "differing_rows", "gauge",
    "Rows of the table that differ on the replica: missing, extra or changed, each confirmed "
    "by re-checks. A table without a usable key cannot name its rows: its value there is a "
    "lower bound, at least 1, the difference of the row counts when they differ."
    + _CACHED, ("dbgauge_job", "table", "replica"))
LAST_RUN = MetricSpec(
    _P + "last_run_timestamp_seconds", "gauge",
    "Unix time the last checksum run finished." + _CACHED, ("dbgauge_job",))
DURATION = MetricSpec(
    _P + "last_run_duration_seconds", "gauge",
    "How long the last checksum run took." + _CACHED, ("dbgauge_job",))
METRICS = (TABLES_CHECKED, TABLES_UNCHECKED, DRIFT, TABLE_ROWS, DIFFERING_CHUNKS,
           DIFFERING_ROWS, LAST_RUN, DURATION)


def samples(job: str, result: CheckResult, finished: float) -> list[Sample]:
    """The metrics of one finished run, read from its evidence (pure: the job and its
    tests share it)."""
    doc = result.evidence
    tables = doc["tables"]
    base = {"dbgauge_job": job}
    out = [
        Sample(TABLES_CHECKED.name, float(sum(t["status"] != "unchecked" for t in tables)),
               base),
        Sample(TABLES_UNCHECKED.name, float(sum(t["status"] == "unchecked" for t in tables)),
               base),
        Sample(DRIFT.name, 1.0 if doc["status"] == "drift" else 0.0, base),
        Sample(LAST_RUN.name, finished, base),
        Sample(DURATION.name, float(doc["seconds"]), base),
    ]
    for table in tables:
        if table["status"] == "unchecked":
            continue
        out.append(Sample(TABLE_ROWS.name, float(table["rows"]),
                          {**base, "table": table["table"]}))
        chunks, rows = table["differing_chunks"], table["differing_rows"]
        rows = {**rows, **{u["replica"]: _unnamed_rows(u)
                           for u in table.get("unnamed_differences", [])}}
        for replica in doc["replicas"]:
            labels = {**base, "table": table["table"], "replica": replica}
            out.append(Sample(DIFFERING_CHUNKS.name, float(chunks.get(replica, 0)), labels))
            out.append(Sample(DIFFERING_ROWS.name, float(rows.get(replica, 0)), labels))
    return out


def _unnamed_rows(unnamed: dict[str, Any]) -> int:
    """Differing rows of a keyless table, whose rows cannot be named: at least 1 (an alert
    on differing_rows > 0 must fire), at least the difference of the row counts."""
    src, rep = unnamed["source_rows"], unnamed["replica_rows"]
    return max(1, abs(src - rep)) if src is not None and rep is not None else 1
