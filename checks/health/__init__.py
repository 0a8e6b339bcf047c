"""What every `dbgauge check` shares: the nodes it looks at, running per node, thresholds.

A check looks at nodes: a `toolkit.targets.Selection` of configured targets (`--config`
+ `--target`) or servers named by DSN on the command line (`--node`). Each node gets its
own connection, opened in parallel; a node that cannot be reached or queried becomes an
UNKNOWN finding naming the node and the reason -- never an OK. The health checks
live one per module (`replication`, `lag`, `connections`, `pgbouncer_pools`, `locks`) and
read servers through the collectors' facts; `health_checks()` maps the command names to
them, `model` holds what they share and `run` runs one over a selection.
"""

from __future__ import annotations

from collections.abc import Mapping

from dbgauge.checks.health import (
    activity,
    archiver,
    connections,
    group_replication,
    history_list,
    lag,
    locks,
    maintenance,
    pgbouncer_pools,
    replication,
    sequence,
    uptime,
    wraparound,
)
from dbgauge.checks.health.model import HealthCheck, Thresholds
from dbgauge.checks.health.run import run_health

__all__ = ["HealthCheck", "Thresholds", "health_checks", "run_health"]

_CHECKS: tuple[HealthCheck, ...] = (
    replication, lag, connections, pgbouncer_pools, locks,
    # PostgreSQL, as check_postgres names them
    wraparound.CHECK, maintenance.VACUUM, maintenance.ANALYZE, sequence.CHECK, archiver.CHECK,
    activity.QUERY_TIME, activity.TXN_IDLE, activity.TXN_TIME,
    # both engines / MySQL-family
    uptime.CHECK, history_list.CHECK, group_replication,
)


def health_checks() -> Mapping[str, HealthCheck]:
    """Command name -> check module."""
    return {m.NAME: m for m in _CHECKS}
