"""Named SQL statements from `sql/`, chosen by flavor and server version.

Layout: ``sql/<flavor>/<name>.sql`` is the default; ``<name>@<version>.sql`` applies from
that server version on (nearest lower version wins, as pgwatch does). MariaDB falls back
to ``sql/mysql/``. Leading ``--`` comment lines (provenance, notes) and a trailing
semicolon are stripped, because PgBouncer's admin console parses neither.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from dbgauge.toolkit.db.version import Version, parse_version, version_text
from dbgauge.toolkit.errors import DbgaugeError

FLAVOR_SEARCH = {
    "mariadb": ("mariadb", "mysql"),
    "mysql": ("mysql",),
    "postgres": ("postgres",),
    "pgbouncer": ("pgbouncer",),
}
_VERSIONED = re.compile(r"^(?P<name>[a-z0-9_]+)@(?P<version>\d+(?:\.\d+)*)\.sql$")


@lru_cache(maxsize=1)
def sql_root() -> Path:
    """`toolkit/sql` inside an installed wheel, else `sql/` beside the packages."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if candidate.is_dir():
            return candidate
    raise DbgaugeError(f"dbgauge's SQL directory is missing (looked in {here / 'sql'}); "
                       "reinstall the package")


def _clean(text: str) -> str:
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";").strip()


@lru_cache(maxsize=512)
def _candidates(flavor_dir: Path, name: str) -> tuple[tuple[Version, Path], ...]:
    found: list[tuple[Version, Path]] = []
    if not flavor_dir.is_dir():
        return ()
    for path in flavor_dir.iterdir():
        if path.name == f"{name}.sql":
            found.append(((), path))
            continue
        m = _VERSIONED.match(path.name)
        if m and m.group("name") == name:
            found.append((parse_version(m.group("version")), path))
    return tuple(sorted(found, reverse=True))


@lru_cache(maxsize=512)
def _read(path: Path) -> str:
    return _clean(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1024)
def load_sql(flavor: str, name: str, version: Version = ()) -> str:
    """The statement `name` for this flavor and version (nearest lower version wins);
    cached like the files it reads (a checksum chunk fills one template per key bucket)."""
    root = sql_root()
    for directory in FLAVOR_SEARCH.get(flavor, (flavor,)):
        for min_version, path in _candidates(root / directory, name):
            if min_version <= version:
                return _read(path)
    raise DbgaugeError(f"no SQL named {name!r} for {flavor} {version_text(version)}")


_IDENT = re.compile(r"^[A-Za-z0-9_$]{1,63}$")


def quote_ident(name: str, flavor: str) -> str:
    """Quote one identifier (schema, table, role) for SQL that cannot bind it.

    The only place dbgauge formats identifiers into SQL. Names outside a conservative
    character set are refused rather than escaped, so a config value can never smuggle
    SQL in.
    """
    if not _IDENT.match(name):
        raise DbgaugeError(
            f"identifier {name!r} is not allowed: use letters, digits, _ or $ (max 63)"
        )
    if flavor in ("mysql", "mariadb"):
        return f"`{name}`"
    return f'"{name}"'


def quote_qualified(name: str, flavor: str) -> str:
    """'schema.table' -> each part quoted by `quote_ident`."""
    return ".".join(quote_ident(part, flavor) for part in name.split("."))
