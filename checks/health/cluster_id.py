"""check cluster-id: whether the server is still the cluster it was (check_postgres'
cluster_id): its database system identifier, from pg_control_system() over the
connection (pg_monitor; check_postgres runs pg_controldata on the server's data
directory), held against the one given with -c or -w. A cluster rebuilt from a backup
keeps it; a new initdb (a standby rebuilt from scratch, a wrong server behind an address)
does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.expected import expected_outcome, expected_value
from dbgauge.checks.health.model import HealthCheck, NodeOutcome
from dbgauge.toolkit.errors import CheckFailed

if TYPE_CHECKING:
    from dbgauge.checks.health.filters import Scope
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection, scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import text

    rows = conn.query("check_cluster_id")
    ident = text(rows[0].get("system_identifier")) if rows else ""
    if not ident:
        raise CheckFailed("pg_control_system() gave no system identifier")
    return expected_outcome(node, ident, f"system identifier {ident}", scope, "cluster-id")


CHECK = HealthCheck(
    name="cluster-id",
    summary="Whether the database system identifier is the one given: -c ID (PostgreSQL).",
    measures="the database system identifier (pg_control_system) against the one given",
    kinds=frozenset({"postgres"}), metric="", scoped=_read,
    own_thresholds=expected_value("ID", "a system identifier (digits)", str.isdigit))
