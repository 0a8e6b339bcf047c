"""check pgbouncer-pool: one column of PgBouncer's SHOW POOLS per pool, against counts
(check_postgres' pgb_pool_cl_active, pgb_pool_cl_waiting, pgb_pool_sv_active,
pgb_pool_sv_idle, pgb_pool_sv_used, pgb_pool_sv_tested, pgb_pool_sv_login and
pgb_pool_maxwait: `--stat` names the column, as the action's name does there).

Every pool is judged, the worst counts; one perfdata item per pool, labelled by its
database (database/user when a database has pools of several users). `--include` /
`--exclude` filter pools by database, as check_postgres' skip_item does. No default
thresholds, as there: give -w or -c.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    CheckOption,
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
)
from dbgauge.checks.health.scope import Item, Scope, worst_item
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.ranges import Range

if TYPE_CHECKING:
    from dbgauge.collectors.pgbouncer_pools import Pool
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

NEVER = Range(start=-math.inf)  # no default: alerts only when the user gives a level
STATS = ("cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used", "sv_tested",
         "sv_login", "maxwait")


def stat_of(pool: Pool, stat: str) -> float | None:
    """The SHOW POOLS column `stat` of one pool (maxwait in whole seconds, as there)."""
    from dbgauge.collectors.pgbouncer_pools import CLIENT_STATES, SERVER_STATES

    if stat == "maxwait":
        return pool.maxwait
    if stat in CLIENT_STATES:
        return pool.clients.get(CLIENT_STATES[stat])
    return pool.servers.get(SERVER_STATES[stat])


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.collectors.pgbouncer_pools import read_pools

    stat = scope.option("stat")
    if stat not in STATS:
        raise CheckFailed(f"give --stat, one of {', '.join(STATS)} (the column of SHOW POOLS "
                          "check_postgres' pgb_pool_* action names)")
    pools = read_pools(conn).pools
    shared = Counter(p.database for p in pools)
    items = [Item(p.database if shared[p.database] == 1 else p.name, value, name=p.database)
             for p in pools if (value := stat_of(p, stat)) is not None]
    if pools and not items:
        raise CheckFailed(f"this PgBouncer's SHOW POOLS has no column {stat}")
    return worst_item(node, items, scope, metric=stat, what="pool",
                      show=f"{{:.0f}} {stat}", nothing="no pool")


CHECK = HealthCheck(
    name="pgbouncer-pool",
    summary="One SHOW POOLS column per pool: --stat cl_waiting -w 5 (PgBouncer).",
    measures="the SHOW POOLS column --stat names (cl_active, cl_waiting, sv_active, "
             "sv_idle, sv_used, sv_tested, sv_login, maxwait) of each pool",
    kinds=frozenset({"pgbouncer"}), metric="pool_stat", scoped=_read, filters="pool",
    defaults=Thresholds(NEVER, NEVER), unit="connections (maxwait: seconds)",
    finding="pgbouncer-pool",
    needs_thresholds=True,
    options=(CheckOption("stat", "COLUMN", "The SHOW POOLS column to judge, as check_postgres' "
                         "pgb_pool_* action names it.", choices=STATS, required=True),))
