"""pg-standby cloned through the online backup API, for majors without pg_basebackup.

The npm builds of PostgreSQL 13, 14, 16, 17 and 18 carry no pg_basebackup, and Debian's
15 refuses newer servers. A low-level base backup needs none: in one session on
pg-primary, `pg_backup_start` (`pg_start_backup` before 15), a copy of the data directory,
then `pg_backup_stop(false)`, whose label file goes into the copy as backup_label. The
copy streams the WAL it needs from pg-primary through its physical slot, which reserved
it before the backup began.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from dbgauge.toolkit.sandbox.core import Sandbox, run_sql
from dbgauge.toolkit.sandbox.model import REPL_USER, STANDBY_SLOT
from dbgauge.toolkit.sandbox.postgres_setup import PRIMARY, STANDBY, local_conn
from dbgauge.toolkit.sandbox.process import chown

# What a base backup leaves out (the server's own run-time files), as pg_basebackup does:
# the directories are made empty, the files not copied.
_EMPTY_DIRS = frozenset({"pg_wal", "pg_replslot", "pg_stat_tmp", "pg_dynshmem", "pg_notify",
                         "pg_serial", "pg_snapshots", "pg_subtrans", "pgsql_tmp"})
_SKIP_FILES = frozenset({"postmaster.pid", "postmaster.opts", "backup_label.old"})


def copy_datadir(source: Path, target: Path) -> None:
    """Copy a running server's data directory, leaving out what a base backup does; a
    file that goes away while we copy (the server removed it) is no loss."""
    for parent, dirs, files in os.walk(source):
        here = Path(parent)
        into = target / here.relative_to(source)
        into.mkdir(mode=0o700, exist_ok=True)
        if here.name in _EMPTY_DIRS:
            if here.name == "pg_wal":
                (into / "archive_status").mkdir(mode=0o700, exist_ok=True)
            dirs[:] = []
            continue
        for name in files:
            if name in _SKIP_FILES:
                continue
            with contextlib.suppress(FileNotFoundError):
                shutil.copy2(here / name, into / name)


def standby_settings(sb: Sandbox) -> str:
    """What `pg_basebackup -R` would append to postgresql.auto.conf."""
    conninfo = (f"host=127.0.0.1 port={sb.port(PRIMARY)} user={REPL_USER} "
                f"password={sb.pw['pg-repl']} application_name={STANDBY}")
    return (f"primary_conninfo = '{conninfo.replace(chr(39), chr(39) * 2)}'\n"
            f"primary_slot_name = '{STANDBY_SLOT}'\n")


def clone_standby(sb: Sandbox, target: Path) -> None:
    """Make `target` a copy of pg-primary's data directory set up to stream as pg-standby."""
    source = sb.layout.datadir(PRIMARY)
    with contextlib.closing(local_conn(sb, PRIMARY)) as conn:
        run_sql(conn, "sandbox_backup_start", ("dbgauge sandbox pg-standby",))
        try:
            copy_datadir(source, target)
        finally:
            rows = run_sql(conn, "sandbox_backup_stop")
    (target / "backup_label").write_text(str(rows[0]["labelfile"]))
    if rows[0]["spcmapfile"]:
        (target / "tablespace_map").write_text(str(rows[0]["spcmapfile"]))
    (target / "standby.signal").write_text("")
    with open(target / "postgresql.auto.conf", "a") as conf:
        conf.write(standby_settings(sb))
    target.chmod(0o700)
    chown(target, "postgres", recursive=True)
