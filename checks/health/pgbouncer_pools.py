"""check pgbouncer-pools: clients queueing for a server connection, and for how long.

From SHOW POOLS (the pgbouncer_pools collector's facts): the threshold
applies to the longest current wait (maxwait) over all pools; the pool that waits
longest and the number of waiting clients are in the message and the perfdata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds

if TYPE_CHECKING:
    from dbgauge.collectors.pgbouncer_pools import PoolsFacts
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def pool_wait(facts: PoolsFacts) -> Measured:
    """The longest wait of pools already read (`dbgauge status` also counts their
    clients)."""
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
    queueing = sum(1 for n in waiting.values() if n > 0)  # pools with a client waiting
    text = (f"{total:.0f} client(s) waiting in {queueing} of {len(maxwait)} pool(s)"
            if total else f"no client waiting in {len(maxwait)} pool(s)")
    if longest > 0 or total:
        text += (f"; longest wait {longest:.1f} s in pool {worst_pool} "
                 f"({waiting.get(worst_pool, 0.0):.0f} waiting)")
    return Measured(longest, text, extra=(("clients_waiting", total),))


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.collectors.pgbouncer_pools import read_pools

    return pool_wait(read_pools(conn))


CHECK = HealthCheck(
    name="pgbouncer-pools", summary="Clients waiting in PgBouncer pools: the longest wait.",
    measures="the longest current client wait (maxwait), seconds",
    kinds=frozenset({"pgbouncer"}), metric="maxwait_seconds", read=_read,
    defaults=Thresholds.above(1.0, 5.0), unit="seconds", finding="pool-wait")
