"""pgbouncer_pools: clients and server connections per pool (SHOW POOLS).

One pool per (database, user). Client connections by state show who is served and who
queues: `cl_waiting` above 0 means the pool is exhausted (pool_size, max_db_connections
or max_user_connections reached), and the maxwait gauge says for how long the oldest
client has been queueing. Server connections by state show the pool's use.

Columns are read by name, so older and newer PgBouncers work alike: a state column a
version lacks yields no series (PgBouncer 1.18 added the cancel-request states).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

_POOL = ("database", "user")
CLIENT_STATES = {
    "cl_active": "active", "cl_waiting": "waiting",
    "cl_active_cancel_req": "active_cancel_req", "cl_waiting_cancel_req": "waiting_cancel_req",
}
SERVER_STATES = {
    "sv_active": "active", "sv_active_cancel": "active_cancel",
    "sv_being_canceled": "being_canceled", "sv_idle": "idle", "sv_used": "used",
    "sv_tested": "tested", "sv_login": "login",
}
CLIENTS = MetricSpec(
    "dbgauge_pgbouncer_pool_client_connections", "gauge",
    "Client connections of the pool by state (SHOW POOLS cl_*): active (linked to a server "
    "or idle), waiting (sent a query, no server yet), active_cancel_req, waiting_cancel_req.",
    (*_POOL, "state"))
SERVERS = MetricSpec(
    "dbgauge_pgbouncer_pool_server_connections", "gauge",
    "Server connections of the pool by state (SHOW POOLS sv_*): active, active_cancel, "
    "being_canceled, idle, used, tested, login.", (*_POOL, "state"))
MAXWAIT = MetricSpec(
    "dbgauge_pgbouncer_pool_client_maxwait_seconds", "gauge",
    "How long the oldest waiting client of the pool has waited (maxwait + maxwait_us); 0 "
    "when no client waits.", _POOL)

Row = Mapping[str, Any]


def pool_samples(rows: Iterable[Row]) -> Iterator[Sample]:
    """SHOW POOLS rows -> per-pool samples."""
    for row in rows:
        pool = {"database": str(row["database"]), "user": str(row["user"])}
        for column, state in CLIENT_STATES.items():
            value = number(row.get(column))
            if value is not None:
                yield Sample(CLIENTS.name, value, {**pool, "state": state})
        for column, state in SERVER_STATES.items():
            value = number(row.get(column))
            if value is not None:
                yield Sample(SERVERS.name, value, {**pool, "state": state})
        seconds = number(row.get("maxwait"))
        if seconds is not None:
            micros = number(row.get("maxwait_us")) or 0.0
            yield Sample(MAXWAIT.name, seconds + micros / 1e6, pool)


class PgBouncerPools(Collector):
    name = "pgbouncer_pools"
    help = ("Per-pool client and server connections by state and the oldest client wait "
            "(SHOW POOLS).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = (CLIENTS, SERVERS, MAXWAIT)

    def collect(self, conn: Connection) -> Iterable[Sample]:
        yield from pool_samples(conn.query("show_pools"))
