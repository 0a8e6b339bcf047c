"""check wal-files: how many WAL segment files pg_wal holds (check_postgres' wal_files,
defaults 10 and 15 files as there). Segments pile up when archiving fails, a replication
slot holds WAL back or max_wal_size is large; the disk they fill stops the server. Read
with pg_ls_waldir() (pg_monitor), where check_postgres needs a superuser or a wrapper
function (--lsfunc). Their total size is in the perfdata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.toolkit.db.values import number

    row = conn.query("wal_files")[0]
    files = number(row.get("wal_segments")) or 0.0
    size = number(row.get("wal_size_bytes")) or 0.0
    return Measured(files, f"{files:.0f} WAL segment file(s), {size / 2 ** 20:.0f} MiB",
                    extra=(("wal_size_bytes", size),))


CHECK = HealthCheck(
    name="wal-files", summary="WAL segment files in pg_wal (PostgreSQL).",
    measures="WAL segment files in pg_wal", kinds=frozenset({"postgres"}),
    metric="wal_files", read=_read, defaults=Thresholds.above(10, 15), unit="files",
    finding="wal-files")
