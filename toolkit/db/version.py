"""Server and software versions: one type, one parser, one formatter for all of dbgauge.

A version is a tuple of ints, so versions compare with `<` and `>=` and slice to their
major.minor; the SQL loader, the collectors' minimum versions, the validators' parameter
tables and the pgTAP runner's psql choice all use this one type.
"""

from __future__ import annotations

import re

Version = tuple[int, ...]

_LEADING = re.compile(r"\s*(\d+(?:\.\d+)*)")
_EXACT = re.compile(r"\s*(\d+(?:\.\d+)*)\s*")


def parse_version(text: str, *, exact: bool = False, min_parts: int = 1) -> Version:
    """'10.11.6-MariaDB-0+deb12u1' -> (10, 11, 6); '15.4 (Debian ...)' -> (15, 4).

    `exact`: the whole text must be a version (a user's '1.18', not a server banner);
    `min_parts`: how many numbers it needs at least. Raises ValueError otherwise.
    """
    m = (_EXACT.fullmatch if exact else _LEADING.match)(text)
    if not m:
        raise ValueError(f"no version number in {text!r}")
    parts = tuple(int(p) for p in m.group(1).split("."))
    if len(parts) < min_parts:
        raise ValueError(f"{text!r} is not a version like {'.'.join(['1'] * min_parts)}")
    return parts


def version_text(version: Version) -> str:
    """(10, 11, 6) -> '10.11.6'."""
    return ".".join(str(part) for part in version)
