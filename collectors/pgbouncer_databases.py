"""pgbouncer_databases: each [databases] entry's limits and use (SHOW DATABASES).

Pool sizes and connection limits next to the server connections in use, paused and
disabled flags, and an info series with where the entry points. Columns are read by
name: PgBouncer 1.24 renamed reserve_pool to reserve_pool_size (both are read into one
metric), and columns a version lacks yield no series.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

_P = "dbgauge_pgbouncer_database_"
_DB = ("database",)

# (spec, columns in order of preference)
GAUGES: tuple[tuple[MetricSpec, tuple[str, ...]], ...] = (
    (MetricSpec(_P + "pool_size", "gauge",
                "Maximum server connections per pool of this database (pool_size).", _DB),
     ("pool_size",)),
    (MetricSpec(_P + "min_pool_size", "gauge",
                "Server connections kept open per pool at least (min_pool_size).", _DB),
     ("min_pool_size",)),
    (MetricSpec(_P + "reserve_pool_size", "gauge",
                "Extra server connections a pool may open when clients wait too long "
                "(reserve_pool_size; reserve_pool before PgBouncer 1.24).", _DB),
     ("reserve_pool_size", "reserve_pool")),
    (MetricSpec(_P + "max_connections", "gauge",
                "Maximum server connections for the whole database (max_db_connections); "
                "0 means no limit.", _DB), ("max_connections",)),
    (MetricSpec(_P + "current_connections", "gauge",
                "Server connections open for the database now.", _DB),
     ("current_connections",)),
    (MetricSpec(_P + "max_client_connections", "gauge",
                "Maximum client connections for the database (max_db_client_connections, "
                "PgBouncer 1.25+); 0 means no limit.", _DB), ("max_client_connections",)),
    (MetricSpec(_P + "current_client_connections", "gauge",
                "Client connections to the database now (PgBouncer 1.25+).", _DB),
     ("current_client_connections",)),
    (MetricSpec(_P + "server_lifetime_seconds", "gauge",
                "Server connections older than this are closed when released "
                "(server_lifetime, PgBouncer 1.23+).", _DB), ("server_lifetime",)),
    (MetricSpec(_P + "paused", "gauge", "1 if the database is paused (PAUSE), else 0.", _DB),
     ("paused",)),
    (MetricSpec(_P + "disabled", "gauge", "1 if the database is disabled (DISABLE), else 0.",
                _DB), ("disabled",)),
)
INFO = MetricSpec(
    _P + "info", "info",
    "Where the entry points: backend host, port and database name, forced user and pool_mode "
    "override (empty when unset); always 1.",
    ("database", "host", "port", "backend_database", "force_user", "pool_mode"))

Row = Mapping[str, Any]


def _text(value: object) -> str:
    return "" if value is None else str(value)


def database_samples(rows: Iterable[Row]) -> Iterator[Sample]:
    """SHOW DATABASES rows -> per-entry samples."""
    for row in rows:
        labels = {"database": str(row["name"])}
        for spec, columns in GAUGES:
            for column in columns:
                value = number(row.get(column))
                if value is not None:
                    yield Sample(spec.name, value, labels)
                    break
        yield Sample(INFO.name, 1.0, {
            **labels, "host": _text(row.get("host")), "port": _text(row.get("port")),
            "backend_database": _text(row.get("database")),
            "force_user": _text(row.get("force_user")), "pool_mode": _text(row.get("pool_mode")),
        })


class PgBouncerDatabases(Collector):
    name = "pgbouncer_databases"
    help = ("Per [databases] entry: pool sizes, connection limits and current connections, "
            "paused/disabled (SHOW DATABASES).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = (*(spec for spec, _ in GAUGES), INFO)

    def collect(self, conn: Connection) -> Iterable[Sample]:
        yield from database_samples(conn.query("show_databases"))
