"""check connection: whether each node accepts a connection from the monitoring role, as
check_postgres' `connection` and check_mysql do -- a server that is down or refuses the
password is CRITICAL (`--unreachable-state unknown` makes it UNKNOWN); one that answers
is OK, with the flavor and version it identified itself as (dbgauge reads them on every
connection, so the check adds no query)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, NodeOutcome

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> NodeOutcome:
    return NodeOutcome(node.name, note=f"connected, {conn.server.flavor} "
                                       f"{conn.server.version_text}")


CHECK = HealthCheck(
    name="connection",
    summary="Whether the server accepts a connection (down: CRITICAL).",
    measures="a connection as the monitoring role: down or password refused is CRITICAL",
    kinds=frozenset({"mysql", "postgres", "pgbouncer"}), metric="", read=_read)
