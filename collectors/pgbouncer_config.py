"""pgbouncer_config: the settings that bound PgBouncer's capacity (SHOW CONFIG).

A handful of limits as gauges, so alerts can compare use with them (used clients from
SHOW LISTS against max_client_conn, a pool's server connections against
default_pool_size), and the global pool_mode as an info series. `read` returns
`ConfigFacts` (`check connections` reads max_client_conn from it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, present

_P = "dbgauge_pgbouncer_config_"

MAX_CLIENT_CONN = MetricSpec(_P + "max_client_connections", "gauge",
                             "Maximum client connections PgBouncer accepts (max_client_conn).")
DEFAULT_POOL_SIZE = MetricSpec(_P + "default_pool_size", "gauge",
                               "Server connections per pool unless the database or user sets "
                               "pool_size (default_pool_size).")
MIN_POOL_SIZE = MetricSpec(_P + "min_pool_size", "gauge",
                           "Server connections kept open per pool at least (min_pool_size).")
RESERVE_POOL_SIZE = MetricSpec(_P + "reserve_pool_size", "gauge",
                               "Extra server connections a pool may open when clients wait "
                               "longer than reserve_pool_timeout (reserve_pool_size).")
MAX_DB_CONNECTIONS = MetricSpec(_P + "max_db_connections", "gauge",
                                "Default maximum server connections per database; 0 means no "
                                "limit (max_db_connections).")
MAX_USER_CONNECTIONS = MetricSpec(_P + "max_user_connections", "gauge",
                                  "Default maximum server connections per user; 0 means no "
                                  "limit (max_user_connections).")
QUERY_WAIT_TIMEOUT = MetricSpec(_P + "query_wait_timeout_seconds", "gauge",
                                "A client waiting longer than this for a server is "
                                "disconnected; 0 means forever (query_wait_timeout).")
INFO = MetricSpec(_P + "info", "info",
                  "PgBouncer's global pool_mode (session, transaction or statement); always 1.",
                  ("pool_mode",))
METRICS = MetricTable(MAX_CLIENT_CONN, DEFAULT_POOL_SIZE, MIN_POOL_SIZE, RESERVE_POOL_SIZE,
                      MAX_DB_CONNECTIONS, MAX_USER_CONNECTIONS, QUERY_WAIT_TIMEOUT, INFO)


@dataclass(frozen=True)
class ConfigFacts:
    """The facts: the capacity settings SHOW CONFIG reports (None when absent or not a
    number) and the global pool_mode ("" when absent)."""

    max_client_conn: float | None = None
    default_pool_size: float | None = None
    min_pool_size: float | None = None
    reserve_pool_size: float | None = None
    max_db_connections: float | None = None
    max_user_connections: float | None = None
    query_wait_timeout: float | None = None
    pool_mode: str = ""


def parse_config(rows: Iterable[Row]) -> ConfigFacts:
    """SHOW CONFIG rows (key, value, ...) -> the selected settings."""
    values = {str(row.get("key")): row.get("value") for row in rows}
    mode = values.get("pool_mode")
    return ConfigFacts(
        max_client_conn=number(values.get("max_client_conn")),
        default_pool_size=number(values.get("default_pool_size")),
        min_pool_size=number(values.get("min_pool_size")),
        reserve_pool_size=number(values.get("reserve_pool_size")),
        max_db_connections=number(values.get("max_db_connections")),
        max_user_connections=number(values.get("max_user_connections")),
        query_wait_timeout=number(values.get("query_wait_timeout")),
        pool_mode=str(mode) if mode else "")


def read_config(conn: Connection) -> ConfigFacts:
    return parse_config(conn.query("show_config"))


def config_samples(settings: ConfigFacts) -> Iterator[Sample]:
    """The settings that are present, then pool_mode as an info series."""
    yield from present(((MAX_CLIENT_CONN, settings.max_client_conn),
                        (DEFAULT_POOL_SIZE, settings.default_pool_size),
                        (MIN_POOL_SIZE, settings.min_pool_size),
                        (RESERVE_POOL_SIZE, settings.reserve_pool_size),
                        (MAX_DB_CONNECTIONS, settings.max_db_connections),
                        (MAX_USER_CONNECTIONS, settings.max_user_connections),
                        (QUERY_WAIT_TIMEOUT, settings.query_wait_timeout)))
    if settings.pool_mode:
        yield Sample(INFO.name, 1.0, {"pool_mode": settings.pool_mode})


class PgBouncerConfig(Collector[ConfigFacts]):
    name = "pgbouncer_config"
    help = ("Capacity settings (max_client_conn, default_pool_size, reserve and limits, "
            "query_wait_timeout) and pool_mode as an info series (SHOW CONFIG).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = METRICS

    def read(self, conn: Connection) -> ConfigFacts:
        return read_config(conn)

    def samples(self, facts: ConfigFacts) -> Iterable[Sample]:
        return config_samples(facts)
