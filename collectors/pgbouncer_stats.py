"""pgbouncer_stats: per-database traffic counters since PgBouncer started.

PgBouncer 1.18-1.22 are read with SHOW STATS (columns total_*), 1.23+ with SHOW
STATS_TOTALS (the same counters without the prefix; see sql/pgbouncer/). Both are
normalised to one set of names, so dashboards do not change with the version. The
avg_* columns are not exported: they are PgBouncer's own rates over `stats_period`, and
`rate()` over the counters gives the same without the sampling lag. Times arrive in
microseconds and are exported in seconds. `read` returns `StatsFacts`, one
`DatabaseStats` per database with the counters as read (times still in microseconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.metrics import Collector, MetricSpec, Sample

_P = "dbgauge_pgbouncer_stats_"
_DB = ("database",)

# normalised column -> (spec, scale)
COUNTERS: dict[str, tuple[MetricSpec, float]] = {
    "xact_count": (MetricSpec(_P + "transactions_total", "counter",
                              "SQL transactions pooled (xact_count).", _DB), 1.0),
    "query_count": (MetricSpec(_P + "queries_total", "counter",
                               "SQL queries pooled (query_count).", _DB), 1.0),
    "bytes_received": (MetricSpec(_P + "received_bytes_total", "counter",
                                  "Network traffic received from clients, bytes "
                                  "(total_received / bytes_received).", _DB), 1.0),
    "bytes_sent": (MetricSpec(_P + "sent_bytes_total", "counter",
                              "Network traffic sent to clients, bytes "
                              "(total_sent / bytes_sent).", _DB), 1.0),
    "xact_time": (MetricSpec(_P + "transaction_seconds_total", "counter",
                             "Time server connections spent in transactions, idle in "
                             "transaction included (xact_time).", _DB), 1e-6),
    "query_time": (MetricSpec(_P + "query_seconds_total", "counter",
                              "Time server connections spent executing queries "
                              "(query_time).", _DB), 1e-6),
    "wait_time": (MetricSpec(_P + "client_wait_seconds_total", "counter",
                             "Time clients spent waiting for a server connection "
                             "(wait_time).", _DB), 1e-6),
    "server_assignment_count": (MetricSpec(_P + "server_assignments_total", "counter",
                                           "Times a server connection was assigned to a "
                                           "client (PgBouncer 1.23+).", _DB), 1.0),
    "client_parse_count": (MetricSpec(_P + "client_parses_total", "counter",
                                      "Prepared statements created by clients (PgBouncer "
                                      "1.24+, max_prepared_statements > 0).", _DB), 1.0),
    "server_parse_count": (MetricSpec(_P + "server_parses_total", "counter",
                                      "Prepared statements PgBouncer created on servers "
                                      "(PgBouncer 1.24+).", _DB), 1.0),
    "bind_count": (MetricSpec(_P + "binds_total", "counter",
                              "Prepared statements readied for execution by clients "
                              "(PgBouncer 1.24+).", _DB), 1.0),
    "client_connect_count": (MetricSpec(_P + "client_connects_total", "counter",
                                        "Client connections accepted (only PgBouncer "
                                        "versions that report client_connect_count).", _DB),
                             1.0),
}
# SHOW STATS names that differ from SHOW STATS_TOTALS once total_ is stripped.
_RENAMED = {"received": "bytes_received", "sent": "bytes_sent"}

Row = Mapping[str, Any]


def normalise(column: str) -> str | None:
    """SHOW STATS or SHOW STATS_TOTALS column -> normalised name; None for averages."""
    if column.startswith("avg_"):
        return None
    name = column.removeprefix("total_")
    return _RENAMED.get(name, name)


@dataclass(frozen=True)
class DatabaseStats:
    """One database's counters by normalised name (a key of COUNTERS), in the order the
    columns came, as PgBouncer reports them (times in microseconds)."""

    database: str
    counters: Mapping[str, float]


@dataclass(frozen=True)
class StatsFacts:
    """The facts: every database's counters, in SHOW STATS order."""

    databases: tuple[DatabaseStats, ...]


def parse_stats(rows: Iterable[Row]) -> StatsFacts:
    """SHOW STATS / SHOW STATS_TOTALS rows -> StatsFacts (averages and unknown columns are
    left out, as are NULLs)."""
    out: list[DatabaseStats] = []
    for row in rows:
        counters: dict[str, float] = {}
        for column, raw in row.items():
            name = normalise(column)
            if name not in COUNTERS:
                continue
            value = number(raw)
            if value is not None:
                counters[name] = value
        out.append(DatabaseStats(str(row["database"]), counters))
    return StatsFacts(tuple(out))


def stats_samples(facts: StatsFacts) -> Iterator[Sample]:
    """Per-database counters, times scaled to seconds."""
    for db in facts.databases:
        labels = {"database": db.database}
        for name, value in db.counters.items():
            spec, scale = COUNTERS[name]
            yield Sample(spec.name, value * scale, labels)


class PgBouncerStats(Collector[StatsFacts]):
    name = "pgbouncer_stats"
    help = ("Per-database counters: transactions, queries, bytes, transaction/query/wait time "
            "(SHOW STATS on 1.18-1.22, SHOW STATS_TOTALS on 1.23+).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = tuple(spec for spec, _ in COUNTERS.values())

    def read(self, conn: Connection) -> StatsFacts:
        return parse_stats(conn.query("show_stats"))

    def samples(self, facts: StatsFacts) -> Iterable[Sample]:
        return stats_samples(facts)
