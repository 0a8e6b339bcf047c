"""check pgbouncer-pools: clients queueing for a server connection, and for how long.

From SHOW POOLS (the pgbouncer_pools collector's facts): the threshold
applies to the longest current wait (maxwait) over all pools; the pool that waits
longest and the number of waiting clients are in the message and the perfdata.
"""

from __future__ import annotations

from dbgauge.checks.health.model import Measured, NodeOutcome, Thresholds, judged
from dbgauge.collectors.pgbouncer_pools import PoolsFacts, read_pools
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.targets import Target

NAME = "pgbouncer-pools"
HELP = "Clients waiting for a server connection in PgBouncer pools, and the longest wait."
KINDS = frozenset({"pgbouncer"})
DEFAULTS: Thresholds | None = Thresholds.above(1.0, 5.0)
METRIC = "maxwait_seconds"


def judge(node: Target, facts: PoolsFacts, limits: Thresholds | None) -> NodeOutcome:
    """The outcome for pools already read (`dbgauge status` also counts their clients)."""
    chosen = limits or DEFAULTS
    assert chosen is not None
    waiting: dict[str, float] = {}
    maxwait: dict[str, float] = {}
    for pool in facts.pools:
        if "waiting" in pool.clients:
            waiting[pool.name] = pool.clients["waiting"]
        if pool.maxwait_seconds is not None:
            maxwait[pool.name] = pool.maxwait_seconds
    total = sum(waiting.values())
    worst_pool = max(maxwait, key=lambda p: (maxwait[p], waiting.get(p, 0.0)), default="")
    longest = maxwait.get(worst_pool, 0.0)
    text = f"{total:.0f} client(s) waiting in {len(maxwait)} pool(s)"
    if longest > 0 or total:
        text += (f"; longest wait {longest:.1f} s in pool {worst_pool} "
                 f"({waiting.get(worst_pool, 0.0):.0f} waiting)")
    return judged(node, chosen, Measured(longest, text), kind="pool-wait", metric=METRIC,
                  extra=(("clients_waiting", total),))


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    return judge(node, read_pools(conn), limits)
