"""pgbouncer_config: the settings that bound PgBouncer's capacity (SHOW CONFIG).

A handful of limits as gauges, so alerts can compare use with them (used clients from
SHOW LISTS against max_client_conn, a pool's server connections against
default_pool_size), and the global pool_mode as an info series.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

_P = "dbgauge_pgbouncer_config_"

# SHOW CONFIG key -> spec
SETTINGS: dict[str, MetricSpec] = {
    "max_client_conn": MetricSpec(_P + "max_client_connections", "gauge",
                                  "Maximum client connections PgBouncer accepts "
                                  "(max_client_conn)."),
    "default_pool_size": MetricSpec(_P + "default_pool_size", "gauge",
                                    "Server connections per pool unless the database or user "
                                    "sets pool_size (default_pool_size)."),
    "min_pool_size": MetricSpec(_P + "min_pool_size", "gauge",
                                "Server connections kept open per pool at least "
                                "(min_pool_size)."),
    "reserve_pool_size": MetricSpec(_P + "reserve_pool_size", "gauge",
                                    "Extra server connections a pool may open when clients "
                                    "wait longer than reserve_pool_timeout "
                                    "(reserve_pool_size)."),
    "max_db_connections": MetricSpec(_P + "max_db_connections", "gauge",
                                     "Default maximum server connections per database; 0 "
                                     "means no limit (max_db_connections)."),
    "max_user_connections": MetricSpec(_P + "max_user_connections", "gauge",
                                       "Default maximum server connections per user; 0 means "
                                       "no limit (max_user_connections)."),
    "query_wait_timeout": MetricSpec(_P + "query_wait_timeout_seconds", "gauge",
                                     "A client waiting longer than this for a server is "
                                     "disconnected; 0 means forever (query_wait_timeout)."),
}
INFO = MetricSpec(_P + "info", "info",
                  "PgBouncer's global pool_mode (session, transaction or statement); always 1.",
                  ("pool_mode",))

Row = Mapping[str, Any]


def config_samples(rows: Iterable[Row]) -> Iterator[Sample]:
    """SHOW CONFIG rows (key, value, ...) -> the selected settings."""
    values = {str(row.get("key")): row.get("value") for row in rows}
    for key, spec in SETTINGS.items():
        value = number(values.get(key))
        if value is not None:
            yield Sample(spec.name, value)
    if values.get("pool_mode"):
        yield Sample(INFO.name, 1.0, {"pool_mode": str(values["pool_mode"])})


class PgBouncerConfig(Collector):
    name = "pgbouncer_config"
    help = ("Capacity settings (max_client_conn, default_pool_size, reserve and limits, "
            "query_wait_timeout) and pool_mode as an info series (SHOW CONFIG).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = (*SETTINGS.values(), INFO)

    def collect(self, conn: Connection) -> Iterable[Sample]:
        yield from config_samples(conn.query("show_config"))
