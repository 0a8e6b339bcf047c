"""check version: whether the server runs the version given (check_postgres' version):
`-w 15` (the major: any 15.x), `-w 15.4` (exactly), on MySQL-family servers `-w 10.11` or
`-w 10.11.19`. The given version must equal the first parts of the server's, dot by dot.

check_postgres 2.25 reads a PostgreSQL 10+ version wrongly for a two-digit minor (15.20 is
"15.2" plus "0" to it), so there `-w 15` warns on 15.20 and `-w 15.2` passes it; dbgauge
compares the parts themselves.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dbgauge.checks.health.expected import expected_outcome, expected_value
from dbgauge.checks.health.model import HealthCheck, NodeOutcome
from dbgauge.toolkit.errors import CheckFailed

if TYPE_CHECKING:
    from dbgauge.checks.health.filters import Scope
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

_VERSION = re.compile(r"\d{1,5}(\.\d{1,5}){0,3}")


def same_version(expected: str, running: str) -> bool:
    """Whether `expected` (15, 15.4, 10.11) is the first dotted parts of `running`."""
    want, have = expected.split("."), running.split(".")
    return len(want) <= len(have) and [int(p) for p in want] == [int(p) for p in have[:len(want)]]


def _read(node: Target, conn: Connection, scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import text

    rows = conn.query("check_version")
    shown = text(rows[0].get("server_version")) if rows else ""
    found = _VERSION.match(shown or "")
    if found is None:
        raise CheckFailed(f"cannot read a version from {shown[:80]!r}")
    return expected_outcome(node, found.group(0), f"version {found.group(0)}", scope,
                            "version", same_version)


CHECK = HealthCheck(
    name="version",
    summary="Whether the server runs the version given: -w 15 or -w 15.4.",
    measures="the server's version against the one given (its first dotted parts)",
    kinds=frozenset({"postgres", "mysql"}), metric="", scoped=_read,
    own_thresholds=expected_value("VERSION", "a version (15, 15.4, 10.11.19)",
                                  lambda v: bool(_VERSION.fullmatch(v))))
