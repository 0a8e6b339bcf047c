"""check archiver: WAL archiving keeping up (check_postgres' archive_ready).

The threshold applies to the WAL segments waiting to be archived (`.ready` files in
pg_wal/archive_status); an archive_command whose last failure is newer than its last
success is CRITICAL whatever the thresholds (archiving has stopped, and pg_wal grows
until the disk is full). A server with archive_mode off is OK and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
    nothing_to_check,
)
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured | NodeOutcome:
    from dbgauge.toolkit.db.values import is_on, number

    row = conn.query("check_archiver")[0]
    if row.get("archive_mode") == "off":
        return nothing_to_check(node, "archive_mode is off")
    ready = number(row.get("ready_files")) or 0.0
    failed = number(row.get("failed_count")) or 0.0
    failing: tuple[Finding, ...] = ()
    if is_on(row.get("failing")):
        age = number(row.get("last_failed_age")) or 0.0
        failing = (Finding(
            Status.CRITICAL, node.name, "archive-failing",
            f"archive_command is failing: last failure {age:.0f} s ago on "
            f"{row.get('last_failed_wal')}, no success since ({failed:.0f} failure(s) in all)",
            {"ready_files": f"{ready:.0f}"},
            fix="read the server log for the archive_command's error and fix the command or "
                "its destination; pg_wal keeps every unarchived segment until then"),)
    return Measured(ready, f"{ready:.0f} WAL segment(s) waiting to be archived",
                    extra=(("archive_failed_total", failed),), findings=failing)


CHECK = HealthCheck(
    name="archiver", summary="WAL segments waiting to be archived; a failing archive_command.",
    measures="WAL segments waiting to be archived (a failing archive_command is CRITICAL)",
    kinds=frozenset({"postgres"}), metric="archive_ready_files", read=_read,
    defaults=Thresholds.above(10.0, 50.0), unit="files", finding="archive-ready")
