"""The daemon's last checksum verdicts on the status page: read from the scheduled
checksum jobs' cached samples (checks.drift.schedule), never by running a checksum."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from dbgauge.checks.drift.schedule import DIFFERING_ROWS, DRIFT, TABLES_CHECKED
from dbgauge.checks.status.model import Topology
from dbgauge.toolkit.jobs import JobSnapshot


def verdicts(jobs: Sequence[JobSnapshot]) -> dict[str, str]:
    """Node name -> the last checksum verdict that covers it (as replica or source)."""
    out: dict[str, str] = {}
    for job in jobs:
        if not job.name.startswith("checksum:") or not job.last_run:
            continue
        when = time.strftime("%H:%M UTC", time.gmtime(job.last_run))
        if not job.success:
            out[job.name.split(":")[1]] = f"last run failed ({when})"
            continue
        rows: dict[str, float] = {}
        for sample in job.samples:
            if sample.name == DIFFERING_ROWS.name:
                replica = sample.labels["replica"]
                rows[replica] = rows.get(replica, 0.0) + sample.value
        for replica, differing in rows.items():
            out[replica] = (f"{differing:.0f} row(s) differ ({when})" if differing
                            else f"in sync ({when})")
        drift = any(s.value for s in job.samples if s.name == DRIFT.name)
        compared = any(s.value for s in job.samples if s.name == TABLES_CHECKED.name)
        verdict = "drift" if drift else "no drift" if compared else "nothing compared"
        out.setdefault(job.name.split(":")[1], f"source, {verdict} ({when})")
    return out


def with_checksums(topology: Topology, jobs: Sequence[JobSnapshot]) -> Topology:
    found = verdicts(jobs)
    if not found:
        return topology
    return replace(topology, nodes=tuple(
        replace(n, checksum=found[n.name]) if n.name in found else n for n in topology.nodes))
