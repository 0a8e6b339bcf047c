"""The server binaries the sandbox runs, and the Debian packages they come from.

The sandbox never installs anything: it checks up front that every binary is there and
otherwise names the packages to install (deploy/install-deps installs them all).
"""

from __future__ import annotations

from pathlib import Path

from dbgauge.toolkit.errors import MissingBinaryError

MARIADBD = Path("/usr/sbin/mariadbd")
INSTALL_DB = Path("/usr/bin/mariadb-install-db")
PG_BIN = Path("/usr/lib/postgresql/15/bin")
PGTAP_CONTROL = Path("/usr/share/postgresql/15/extension/pgtap.control")
PGBOUNCER = Path("/usr/sbin/pgbouncer")
REQUIREMENTS: tuple[tuple[Path, str], ...] = (
    (MARIADBD, "mariadb-server"),
    (INSTALL_DB, "mariadb-server"),
    (PG_BIN / "initdb", "postgresql-15"),
    (PG_BIN / "pg_ctl", "postgresql-15"),
    (PG_BIN / "pg_basebackup", "postgresql-15"),
    (PG_BIN / "postgres", "postgresql-15"),
    (PGTAP_CONTROL, "postgresql-15-pgtap"),
    (PGBOUNCER, "pgbouncer"),
)


def check_binaries() -> None:
    """Raise MissingBinaryError naming every missing file and its package."""
    missing: dict[str, list[str]] = {}
    for path, package in REQUIREMENTS:
        if not path.exists():
            missing.setdefault(package, []).append(str(path))
    if missing:
        packages = " ".join(missing)
        files = ", ".join(f for fs in missing.values() for f in fs)
        raise MissingBinaryError(
            f"missing {files}: install the Debian package(s) {packages} "
            f"(`sudo apt-get install {packages}` or deploy/install-deps); "
            "the sandbox never installs packages itself"
        )
