"""check connection: whether each node accepts a connection from the monitoring role, as
check_postgres' `connection`, check_pgsql and check_mysql do -- a server that is down or
refuses the password is CRITICAL (`--unreachable-state unknown` makes it UNKNOWN; `-n`,
check_mysql's --ignore-auth, makes a refused password OK: the server answered); one that
answers is OK, with the flavor and version it identified itself as (dbgauge reads them on
every connection, so the check adds no query). How long the connection took to open
(handshake, authentication, identification) is its perfdata and is held against -w/-c,
check_pgsql's connection-time thresholds and defaults (2 and 8 seconds): a server that
still answers but takes seconds to let a client in is a warning before it is down. As in
check_pgsql, a level given alone keeps the other's default (`-w 5` keeps `-c 8`), unless
that default would contradict it (`-c 1` alone: no warning).

check_pgsql's `-q SQL` with `-W/-C RANGE`: the query's value (the first column of its first
row) is judged against those ranges beside the connection time, the worse state wins, and
it is perfdata `query`. A query that fails, returns no row or no number has measured
nothing: UNKNOWN (check_pgsql says CRITICAL or WARNING; docs/checks.md). It runs read-only,
as custom-query's.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.ranges import Range
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)
MAX_ROWS = 1000


def query_limits(warning: Range | None, critical: Range | None) -> Thresholds:
    """-W/-C, check_pgsql's ranges of the query's value (none given: never alerts);
    ConfigError for ranges that contradict each other."""
    return Thresholds(NEVER, NEVER, seconds=True, bytes=True).override(
        warning, critical).validate("-W/-C")


def first_value(conn: Connection, query: str) -> float:
    """The first column of the query's first row, as check_pgsql and check_mysql_query
    read it; CheckFailed when there is none or it is not a number."""
    from dbgauge.toolkit.db.values import number, text

    rows = conn.query_read_only(query, MAX_ROWS)
    if not rows or not rows[0]:
        raise CheckFailed("the query returned no row: nothing to judge")
    cell = next(iter(rows[0].values()))
    value = number(cell)
    if value is None or not math.isfinite(value):
        raise CheckFailed(f"the query's value {text(cell)!r} is not a number")
    return value


def _read(node: Target, conn: Connection, scope: Scope) -> Measured:
    took = conn.connect_seconds
    said = f"connected in {took:.3f} s, {conn.server.flavor} {conn.server.version_text}"
    if not scope.query.strip():
        return Measured(took, said)
    value = first_value(conn, scope.query)
    limits = query_limits(scope.query_warning, scope.query_critical)
    state = limits.status(value)
    name = scope.query_name or "the query"
    found = f"{name} returned {value:g}"
    findings = () if state is Status.OK else (Finding(
        state, node.name, "query-value", f"{found} (threshold "
        f"{limits.critical if state is Status.CRITICAL else limits.warning}, -W/-C)"),)
    return Measured(took, f"{said}; {found}", extra=(("query", value),), findings=findings)


CHECK = HealthCheck(
    name="connection",
    summary="Whether the server accepts a connection, and how fast (down: CRITICAL).",
    measures="a connection as the monitoring role: down or password refused is CRITICAL; "
             "seconds to connect against -w/-c; with -q, the query's value against -W/-C",
    kinds=frozenset({"mysql", "postgres", "pgbouncer"}), metric="connect_seconds",
    scoped=_read, plugin_options=frozenset({"query", "ignore-auth"}),
    defaults=replace(Thresholds.above(2.0, 8.0), keeps_defaults=True), unit="seconds",
    finding="slow-connect")
