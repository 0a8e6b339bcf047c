"""pgbouncer_databases: each [databases] entry's limits and use (SHOW DATABASES).

Pool sizes and connection limits next to the server connections in use, paused and
disabled flags, and an info series with where the entry points. Columns are read by
name: PgBouncer 1.24 renamed reserve_pool to reserve_pool_size (both are read into one
metric), and columns a version lacks yield no series. `read` returns `DatabasesFacts`,
one `PgBouncerDatabase` per entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, present

_P = "dbgauge_pgbouncer_database_"
_DB = ("database",)

POOL_SIZE = MetricSpec(
    _P + "pool_size", "gauge",
    "Maximum server connections per pool of this database (pool_size).", _DB)
MIN_POOL_SIZE = MetricSpec(
    _P + "min_pool_size", "gauge",
    "Server connections kept open per pool at least (min_pool_size).", _DB)
RESERVE_POOL_SIZE = MetricSpec(
    _P + "reserve_pool_size", "gauge",
    "Extra server connections a pool may open when clients wait too long "
    "(reserve_pool_size; reserve_pool before PgBouncer 1.24).", _DB)
MAX_CONNECTIONS = MetricSpec(
    _P + "max_connections", "gauge",
    "Maximum server connections for the whole database (max_db_connections); "
    "0 means no limit.", _DB)
CURRENT_CONNECTIONS = MetricSpec(
    _P + "current_connections", "gauge", "Server connections open for the database now.", _DB)
MAX_CLIENT_CONNECTIONS = MetricSpec(
    _P + "max_client_connections", "gauge",
    "Maximum client connections for the database (max_db_client_connections, "
    "PgBouncer 1.25+); 0 means no limit.", _DB)
CURRENT_CLIENT_CONNECTIONS = MetricSpec(
    _P + "current_client_connections", "gauge",
    "Client connections to the database now (PgBouncer 1.25+).", _DB)
SERVER_LIFETIME = MetricSpec(
    _P + "server_lifetime_seconds", "gauge",
    "Server connections older than this are closed when released "
    "(server_lifetime, PgBouncer 1.23+).", _DB)
PAUSED = MetricSpec(_P + "paused", "gauge", "1 if the database is paused (PAUSE), else 0.", _DB)
DISABLED = MetricSpec(_P + "disabled", "gauge",
                      "1 if the database is disabled (DISABLE), else 0.", _DB)
INFO = MetricSpec(
    _P + "info", "info",
    "Where the entry points: backend host, port and database name, forced user and pool_mode "
    "override (empty when unset); always 1.",
    ("database", "host", "port", "backend_database", "force_user", "pool_mode"))
METRICS = MetricTable(POOL_SIZE, MIN_POOL_SIZE, RESERVE_POOL_SIZE, MAX_CONNECTIONS,
                      CURRENT_CONNECTIONS, MAX_CLIENT_CONNECTIONS, CURRENT_CLIENT_CONNECTIONS,
                      SERVER_LIFETIME, PAUSED, DISABLED, INFO)


@dataclass(frozen=True)
class PgBouncerDatabase:
    """One [databases] entry as SHOW DATABASES reports it; a number the version does not
    report is None, a text it leaves empty is ""."""

    name: str
    pool_size: float | None = None
    min_pool_size: float | None = None
    reserve_pool_size: float | None = None  # reserve_pool before PgBouncer 1.24
    max_connections: float | None = None
    current_connections: float | None = None
    max_client_connections: float | None = None  # PgBouncer 1.25+
    current_client_connections: float | None = None  # PgBouncer 1.25+
    server_lifetime: float | None = None  # seconds; PgBouncer 1.23+
    paused: float | None = None  # 1 or 0
    disabled: float | None = None  # 1 or 0
    host: str = ""
    port: str = ""
    backend_database: str = ""
    force_user: str = ""
    pool_mode: str = ""


@dataclass(frozen=True)
class DatabasesFacts:
    """The facts: every [databases] entry, in SHOW DATABASES order."""

    databases: tuple[PgBouncerDatabase, ...]


def _first(row: Row, *columns: str) -> float | None:
    """The first of `columns` holding a number."""
    for column in columns:
        value = number(row.get(column))
        if value is not None:
            return value
    return None


def parse_databases(rows: Iterable[Row]) -> DatabasesFacts:
    """SHOW DATABASES rows -> DatabasesFacts."""
    return DatabasesFacts(tuple(PgBouncerDatabase(
        name=str(row["name"]), pool_size=_first(row, "pool_size"),
        min_pool_size=_first(row, "min_pool_size"),
        reserve_pool_size=_first(row, "reserve_pool_size", "reserve_pool"),
        max_connections=_first(row, "max_connections"),
        current_connections=_first(row, "current_connections"),
        max_client_connections=_first(row, "max_client_connections"),
        current_client_connections=_first(row, "current_client_connections"),
        server_lifetime=_first(row, "server_lifetime"), paused=_first(row, "paused"),
        disabled=_first(row, "disabled"), host=text(row.get("host")),
        port=text(row.get("port")), backend_database=text(row.get("database")),
        force_user=text(row.get("force_user")), pool_mode=text(row.get("pool_mode")),
    ) for row in rows))


def read_databases(conn: Connection) -> DatabasesFacts:
    return parse_databases(conn.query("show_databases"))


def database_samples(facts: DatabasesFacts) -> Iterator[Sample]:
    """Per-entry samples: the numbers present, then the info series."""
    for db in facts.databases:
        labels = {"database": db.name}
        yield from present(((POOL_SIZE, db.pool_size), (MIN_POOL_SIZE, db.min_pool_size),
                            (RESERVE_POOL_SIZE, db.reserve_pool_size),
                            (MAX_CONNECTIONS, db.max_connections),
                            (CURRENT_CONNECTIONS, db.current_connections),
                            (MAX_CLIENT_CONNECTIONS, db.max_client_connections),
                            (CURRENT_CLIENT_CONNECTIONS, db.current_client_connections),
                            (SERVER_LIFETIME, db.server_lifetime), (PAUSED, db.paused),
                            (DISABLED, db.disabled)), labels)
        yield Sample(INFO.name, 1.0, {
            **labels, "host": db.host, "port": db.port, "backend_database": db.backend_database,
            "force_user": db.force_user, "pool_mode": db.pool_mode,
        })


class PgBouncerDatabases(Collector[DatabasesFacts]):
    name = "pgbouncer_databases"
    help = ("Per [databases] entry: pool sizes, connection limits and current connections, "
            "paused/disabled (SHOW DATABASES).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = METRICS

    def read(self, conn: Connection) -> DatabasesFacts:
        return read_databases(conn)

    def samples(self, facts: DatabasesFacts) -> Iterable[Sample]:
        return database_samples(facts)
