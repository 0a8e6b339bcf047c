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

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.metrics import Collector, Column, MetricSpec, MetricTable, Sample

_P = "dbgauge_pgbouncer_stats_"
_DB = ("database",)


def _counter(name: str, column: str, what: str, scale: float = 1.0) -> Column:
    """A per-database counter from a normalised column (times: microseconds -> seconds)."""
    return Column(MetricSpec(_P + name, "counter", what, _DB), column, scale)


METRICS = MetricTable(
    _counter("transactions_total", "xact_count", "SQL transactions pooled (xact_count)."),
    _counter("queries_total", "query_count", "SQL queries pooled (query_count)."),
    _counter("received_bytes_total", "bytes_received",
             "Network traffic received from clients, bytes (total_received / bytes_received)."),
    _counter("sent_bytes_total", "bytes_sent",
             "Network traffic sent to clients, bytes (total_sent / bytes_sent)."),
    _counter("transaction_seconds_total", "xact_time",
             "Time server connections spent in transactions, idle in transaction included "
             "(xact_time).", 1e-6),
    _counter("query_seconds_total", "query_time",
             "Time server connections spent executing queries (query_time).", 1e-6),
    _counter("client_wait_seconds_total", "wait_time",
             "Time clients spent waiting for a server connection (wait_time).", 1e-6),
    _counter("server_assignments_total", "server_assignment_count",
             "Times a server connection was assigned to a client (PgBouncer 1.23+)."),
    _counter("client_parses_total", "client_parse_count",
             "Prepared statements created by clients (PgBouncer 1.24+, "
             "max_prepared_statements > 0)."),
    _counter("server_parses_total", "server_parse_count",
             "Prepared statements PgBouncer created on servers (PgBouncer 1.24+)."),
    _counter("binds_total", "bind_count",
             "Prepared statements readied for execution by clients (PgBouncer 1.24+)."),
    _counter("client_connects_total", "client_connect_count",
             "Client connections accepted (only PgBouncer versions that report "
             "client_connect_count)."),
)
# Every counter by normalised column.
COUNTERS: dict[str, Column] = {c.column: c for c in METRICS.columns}
# SHOW STATS names that differ from SHOW STATS_TOTALS once total_ is stripped.
_RENAMED = {"received": "bytes_received", "sent": "bytes_sent"}


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
            counter = COUNTERS[name]
            yield Sample(counter.spec.name, value * counter.scale, labels)


class PgBouncerStats(Collector[StatsFacts]):
    name = "pgbouncer_stats"
    help = ("Per-database counters: transactions, queries, bytes, transaction/query/wait time "
            "(SHOW STATS on 1.18-1.22, SHOW STATS_TOTALS on 1.23+).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = METRICS

    def read(self, conn: Connection) -> StatsFacts:
        return parse_stats(conn.query("show_stats"))

    def samples(self, facts: StatsFacts) -> Iterable[Sample]:
        return stats_samples(facts)
