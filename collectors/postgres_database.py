"""postgres_database: pg_stat_database per database, and connections against the limit.

Per database: backends, commits and rollbacks, block reads and hits (the cache hit ratio
is `hits / (hits + reads)` in PromQL), tuples, temp files and bytes, deadlocks, recovery
conflicts, I/O time and when the counters were last reset. Server-wide: client
connections by state (a fixed set, every state always present) next to max_connections
and the superuser-reserved slots. `read` returns `PgDatabaseFacts`; `read_connections` is
its server-wide half, which `check connections` uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, numbers
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Sample,
    column_samples,
    present,
)

_P = "dbgauge_postgres_database_"
_DB = ("database",)

BACKENDS = MetricSpec(_P + "backends", "gauge",
                      "Backends connected to the database (pg_stat_database.numbackends).", _DB)
STATS_RESET = MetricSpec(
    _P + "stats_reset_timestamp_seconds", "gauge",
    "When the database's statistics were last reset (Unix seconds); absent if never.", _DB)

CONNECTION_STATES = {
    "active": "active",
    "idle": "idle",
    "idle in transaction": "idle_in_transaction",
    "idle in transaction (aborted)": "idle_in_transaction_aborted",
    "fastpath function call": "fastpath_function_call",
    "disabled": "disabled",
}
CONNECTIONS = MetricSpec(
    "dbgauge_postgres_connections", "gauge",
    "Client backends by state (pg_stat_activity: active, idle, idle_in_transaction, "
    "idle_in_transaction_aborted, fastpath_function_call, disabled); dbgauge's own "
    "connection included.", ("state",))
MAX_CONNECTIONS = MetricSpec("dbgauge_postgres_max_connections", "gauge",
                             "Configured connection limit (max_connections).")
RESERVED = MetricSpec("dbgauge_postgres_superuser_reserved_connections", "gauge",
                      "Connection slots reserved for superusers "
                      "(superuser_reserved_connections).")


def _counter(name: str, column: str, what: str) -> Column:
    """A counter straight from a pg_stat_database column (the I/O times below are scaled
    from milliseconds)."""
    return Column(MetricSpec(_P + name, "counter", f"{what} (pg_stat_database.{column}).", _DB),
                  column)


METRICS = MetricTable(
    BACKENDS,
    _counter("xact_commits_total", "xact_commit", "Transactions committed"),
    _counter("xact_rollbacks_total", "xact_rollback", "Transactions rolled back"),
    _counter("blocks_read_total", "blks_read",
             "Blocks read from disk or the OS cache (not found in shared buffers)"),
    _counter("blocks_hit_total", "blks_hit", "Blocks found in shared buffers"),
    _counter("tuples_returned_total", "tup_returned", "Rows returned by sequential and index "
             "scans"),
    _counter("tuples_fetched_total", "tup_fetched", "Rows fetched by index scans"),
    _counter("tuples_inserted_total", "tup_inserted", "Rows inserted"),
    _counter("tuples_updated_total", "tup_updated", "Rows updated"),
    _counter("tuples_deleted_total", "tup_deleted", "Rows deleted"),
    _counter("temp_files_total", "temp_files", "Temporary files created by queries"),
    _counter("temp_bytes_total", "temp_bytes", "Bytes written to temporary files by queries"),
    _counter("deadlocks_total", "deadlocks", "Deadlocks detected"),
    _counter("conflicts_total", "conflicts",
             "Queries cancelled by recovery conflicts (standbys only)"),
    Column(MetricSpec(_P + "block_read_seconds_total", "counter",
                      "Time spent reading data blocks (pg_stat_database.blk_read_time; 0 unless "
                      "track_io_timing is on).", _DB), "blk_read_time", 0.001),
    Column(MetricSpec(_P + "block_write_seconds_total", "counter",
                      "Time spent writing data blocks (pg_stat_database.blk_write_time; 0 "
                      "unless track_io_timing is on).", _DB), "blk_write_time", 0.001),
    STATS_RESET, CONNECTIONS, MAX_CONNECTIONS, RESERVED,
)


@dataclass(frozen=True)
class DatabaseStats:
    """One pg_stat_database row: the counters by column name as PostgreSQL reports them
    (blk_read_time and blk_write_time in milliseconds); NULL values are left out."""

    name: str
    backends: float | None
    counters: Mapping[str, float]
    stats_reset: float | None = None  # Unix seconds; None if never reset


@dataclass(frozen=True)
class Connections:
    """Client backends by state (every CONNECTION_STATES label, 0 when none) and the
    connection limits."""

    by_state: Mapping[str, float]
    max_connections: float | None
    reserved_connections: float | None

    @property
    def used(self) -> float:
        return float(sum(self.by_state.values()))

    @property
    def available(self) -> float:
        """The slots applications can get: max_connections minus the reserved ones."""
        return (self.max_connections or 0.0) - (self.reserved_connections or 0.0)


@dataclass(frozen=True)
class PgDatabaseFacts:
    """The facts: every database's statistics, and the server's connections."""

    databases: tuple[DatabaseStats, ...]
    connections: Connections


def parse_stat_database(rows: Iterable[Row]) -> tuple[DatabaseStats, ...]:
    """`stat_database` rows -> DatabaseStats."""
    return tuple(DatabaseStats(
        str(row["datname"]), number(row.get("numbackends")),
        numbers(row, METRICS.column_names), number(row.get("stats_reset"))) for row in rows)


def parse_connections(rows: Iterable[Row], limits: Row) -> Connections:
    """`connections` rows (state, connections) and the row carrying the limits ->
    Connections; states outside CONNECTION_STATES are not counted."""
    counts = dict.fromkeys(CONNECTION_STATES.values(), 0.0)
    for row in rows:
        state = CONNECTION_STATES.get(str(row.get("state")))
        if state is not None:
            counts[state] += number(row.get("connections")) or 0.0
    return Connections(counts, number(limits.get("max_connections")),
                       number(limits.get("reserved_connections")))


def read_connections(conn: Connection) -> Connections:
    """Client connections by state and the limits: one statement (the limits ride on
    every row), two only for a row-less answer (not seen: dbgauge's own connection is
    always there)."""
    rows = conn.query("connections")
    return parse_connections(rows, rows[0] if rows else conn.query("max_connections")[0])


def database_samples(databases: Iterable[DatabaseStats]) -> Iterator[Sample]:
    """Per-database samples (NULL values were left out when read)."""
    for db in databases:
        labels = {"database": db.name}
        if db.backends is not None:
            yield Sample(BACKENDS.name, db.backends, labels)
        yield from column_samples(METRICS.columns, db.counters, labels)
        if db.stats_reset is not None:
            yield Sample(STATS_RESET.name, db.stats_reset, labels)


def connection_samples(connections: Connections) -> Iterator[Sample]:
    """One sample per known state (0 if none), then the limits."""
    for state, value in connections.by_state.items():
        yield Sample(CONNECTIONS.name, value, {"state": state})
    yield from present(((MAX_CONNECTIONS, connections.max_connections),
                        (RESERVED, connections.reserved_connections)))


class PostgresDatabase(Collector[PgDatabaseFacts]):
    name = "postgres_database"
    help = ("pg_stat_database per database (backends, commits, rollbacks, block reads and hits, "
            "tuples, temp files, deadlocks, conflicts, I/O time); client connections by state "
            "against max_connections.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    metrics = METRICS

    def read(self, conn: Connection) -> PgDatabaseFacts:
        databases = parse_stat_database(conn.query("stat_database"))
        return PgDatabaseFacts(databases, read_connections(conn))

    def samples(self, facts: PgDatabaseFacts) -> Iterable[Sample]:
        yield from database_samples(facts.databases)
        yield from connection_samples(facts.connections)
