"""check connection: whether each node accepts a connection from the monitoring role, as
check_postgres' `connection`, check_pgsql and check_mysql do -- a server that is down or
refuses the password is CRITICAL (`--unreachable-state unknown` makes it UNKNOWN); one that
answers is OK, with the flavor and version it identified itself as (dbgauge reads them on
every connection, so the check adds no query). How long the connection took to open
(handshake, authentication, identification) is its perfdata and is held against -w/-c,
check_pgsql's connection-time thresholds and defaults (2 and 8 seconds): a server that
still answers but takes seconds to let a client in is a warning before it is down."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured:
    took = conn.connect_seconds
    return Measured(took, f"connected in {took:.3f} s, {conn.server.flavor} "
                          f"{conn.server.version_text}")


CHECK = HealthCheck(
    name="connection",
    summary="Whether the server accepts a connection, and how fast (down: CRITICAL).",
    measures="a connection as the monitoring role: down or password refused is CRITICAL; "
             "seconds to connect against -w/-c",
    kinds=frozenset({"mysql", "postgres", "pgbouncer"}), metric="connect_seconds", read=_read,
    defaults=Thresholds.above(2.0, 8.0), unit="seconds", finding="slow-connect")
