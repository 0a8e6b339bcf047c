"""pgbouncer_pools: clients and server connections per pool (SHOW POOLS).

One pool per (database, user). Client connections by state show who is served and who
queues: `cl_waiting` above 0 means the pool is exhausted (pool_size, max_db_connections
or max_user_connections reached), and the maxwait gauge says for how long the oldest
client has been queueing. Server connections by state show the pool's use.

Columns are read by name, so older and newer PgBouncers work alike: a state column a
version lacks yields no series (PgBouncer 1.18 added the cancel-request states). `read`
returns `PoolsFacts`, one `Pool` per row (`check pgbouncer-pools` judges them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, numbers
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

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
METRICS = MetricTable(CLIENTS, SERVERS, MAXWAIT)


@dataclass(frozen=True)
class Pool:
    """One pool (database, user) of SHOW POOLS: connections by state label (only the
    states this PgBouncer reports) and the oldest client's wait as the two columns give
    it (whole seconds, and the microseconds to add)."""

    database: str
    user: str
    clients: Mapping[str, float]  # "active", "waiting", ... (CLIENT_STATES values)
    servers: Mapping[str, float]  # "active", "idle", ... (SERVER_STATES values)
    maxwait: float | None = None  # the maxwait column: whole seconds; None if not reported
    maxwait_us: float = 0.0  # the maxwait_us column (0 when absent)

    @property
    def name(self) -> str:
        return f"{self.database}/{self.user}"

    @property
    def maxwait_seconds(self) -> float | None:
        """maxwait + maxwait_us, in seconds; None if not reported."""
        return None if self.maxwait is None else self.maxwait + self.maxwait_us / 1e6


@dataclass(frozen=True)
class PoolsFacts:
    """The facts: every pool, in SHOW POOLS order."""

    pools: tuple[Pool, ...]


def _states(row: Row, columns: Mapping[str, str]) -> dict[str, float]:
    """The numeric `columns` of `row` by their state label."""
    return {columns[column]: value for column, value in numbers(row, columns).items()}


def parse_pools(rows: Iterable[Row]) -> PoolsFacts:
    """SHOW POOLS rows -> PoolsFacts."""
    return PoolsFacts(tuple(
        Pool(str(row["database"]), str(row["user"]), _states(row, CLIENT_STATES),
             _states(row, SERVER_STATES), number(row.get("maxwait")),
             number(row.get("maxwait_us")) or 0.0)
        for row in rows))


def read_pools(conn: Connection) -> PoolsFacts:
    return parse_pools(conn.query("show_pools"))


def pool_samples(facts: PoolsFacts) -> Iterator[Sample]:
    """Per-pool samples: clients and servers by state, then the oldest wait."""
    for pool in facts.pools:
        labels = {"database": pool.database, "user": pool.user}
        for state, value in pool.clients.items():
            yield Sample(CLIENTS.name, value, {**labels, "state": state})
        for state, value in pool.servers.items():
            yield Sample(SERVERS.name, value, {**labels, "state": state})
        if pool.maxwait_seconds is not None:
            yield Sample(MAXWAIT.name, pool.maxwait_seconds, labels)


class PgBouncerPools(Collector[PoolsFacts]):
    name = "pgbouncer_pools"
    help = ("Per-pool client and server connections by state and the oldest client wait "
            "(SHOW POOLS).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = METRICS

    def read(self, conn: Connection) -> PoolsFacts:
        return read_pools(conn)

    def samples(self, facts: PoolsFacts) -> Iterable[Sample]:
        return pool_samples(facts)
