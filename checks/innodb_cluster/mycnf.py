"""my.cnf for `validate innodb-cluster`: what mysqld makes of the options (its groups,
booleans, sizes). The parser itself is `toolkit.mycnf`, shared with client connections."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.mycnf import (
    CnfDirective,
    CnfFile,
    CnfGroup,
    CnfOption,
    CnfProblem,
    ParsedCnf,
    canonical,
    flatten_mycnf,
    parse_mycnf,
    split_prefix,
)

__all__ = ["CnfDirective", "CnfFile", "CnfGroup", "CnfOption", "CnfProblem", "ParsedCnf",
           "as_bool", "as_int", "canonical", "effective", "flatten_mycnf", "lookup",
           "parse_mycnf", "server_groups", "split_prefix"]

MYSQLD_GROUPS = ("mysqld", "server")


def server_groups(version: Version) -> tuple[str, ...]:
    """Groups mysqld of this version reads: [mysqld], [server], [mysqld-8.0] ..."""
    return (*MYSQLD_GROUPS, f"mysqld-{version[0]}.{version[1]}")


def effective(options: Iterable[CnfOption], version: Version) -> dict[str, CnfOption]:
    """Last occurrence of each option in the groups mysqld reads (later files win)."""
    wanted = set(server_groups(version))
    out: dict[str, CnfOption] = {}
    for opt in options:
        if opt.group in wanted and not opt.name.startswith("maximum_"):
            out[opt.name] = opt
    return out


def lookup(eff: dict[str, CnfOption], name: str) -> CnfOption | None:
    """The option that decides `name`: itself or skip_/disable_/enable_name, last wins."""
    found = [o for o in (eff.get(name), eff.get("skip_" + name), eff.get("disable_" + name),
                         eff.get("enable_" + name)) if o is not None]
    return max(found, key=lambda o: o.order) if found else None


_TRUE = ("on", "true", "1")
_FALSE = ("off", "false", "0")


def as_bool(opt: CnfOption) -> bool | None:
    """The boolean an option sets (skip_/disable_/enable_ applied), None if not a boolean."""
    prefix, _ = split_prefix(opt.name)
    value = "1" if opt.value is None else opt.value.strip().lower()
    if value in _TRUE:
        result = True
    elif value in _FALSE:
        result = False
    else:
        return None
    return (not result) if prefix in ("skip", "disable") else result


_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50, "e": 1 << 60}


def as_int(text: str | None) -> int | None:
    """mysqld numbers: decimal with an optional K/M/G/T/P/E suffix (powers of 1024)."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(-?\d+)\s*([kKmMgGtTpPeE]?)\s*", text)
    if not m:
        return None
    return int(m.group(1)) * _UNITS.get(m.group(2).lower(), 1)
