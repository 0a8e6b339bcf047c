"""postgres_database: pg_stat_database per database, backends by database and state, and
connections against the limit.

Per database: backends, commits and rollbacks, block reads and hits (the cache hit ratio
is `hits / (hits + reads)` in PromQL), tuples, temp files and bytes, deadlocks, recovery
conflicts (in all and by cause), data checksum failures, I/O time, session statistics
(PostgreSQL 14+) and when the counters were last reset; backends by state and the age of
the oldest open transaction in each state. Server-wide: client connections by state (a
fixed set, every state always present) next to max_connections, the superuser-reserved
slots and (PostgreSQL 16+) reserved_connections. `read` returns `PgDatabaseFacts` (two
statements: `stat_database`, `activity`); `read_connections` is the server-wide part
alone, which `check connections` uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import is_on, number, numbers, text
from dbgauge.toolkit.errors import Incomplete
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

CHECKSUM_LAST_FAILURE = MetricSpec(
    _P + "checksum_last_failure_timestamp_seconds", "gauge",
    "When the last data page checksum failure was detected (Unix seconds); absent if none "
    "ever was or data checksums are off.", _DB)
RECOVERY_CONFLICTS = MetricSpec(
    _P + "recovery_conflicts_total", "counter",
    "Queries cancelled by recovery conflicts on a standby, by cause "
    "(pg_stat_database_conflicts: tablespace, lock, snapshot, bufferpin, deadlock, and "
    "logical_slot on PostgreSQL 16+).", ("database", "cause"))
BACKENDS_BY_STATE = MetricSpec(
    "dbgauge_postgres_backends", "gauge",
    "Backends of each database by state (pg_stat_activity: client backends, background "
    "workers and walsenders with a state; dbgauge's own connection included); every "
    "database and state is present.", ("database", "state"))
OLDEST_XACT = MetricSpec(
    "dbgauge_postgres_backends_oldest_transaction_seconds", "gauge",
    "Age of the oldest open transaction among the database's backends in the state "
    "(now - xact_start); 0 when none is in a transaction.", ("database", "state"))

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
ROLE_RESERVED = MetricSpec(
    "dbgauge_postgres_reserved_connections", "gauge",
    "Connection slots reserved for roles with pg_use_reserved_connections (and superusers): "
    "the reserved_connections setting, PostgreSQL 16+; absent before 16.")


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
    _counter("checksum_failures_total", "checksum_failures",
             "Data page checksum failures; absent when data checksums are off"),
    Column(MetricSpec(_P + "session_seconds_total", "counter",
                      "Time sessions spent connected (pg_stat_database.session_time; "
                      "PostgreSQL 14+).", _DB), "session_time", 0.001),
    Column(MetricSpec(_P + "active_seconds_total", "counter",
                      "Time sessions spent executing statements (pg_stat_database.active_time; "
                      "PostgreSQL 14+).", _DB), "active_time", 0.001),
    Column(MetricSpec(_P + "idle_in_transaction_seconds_total", "counter",
                      "Time sessions spent idle in a transaction "
                      "(pg_stat_database.idle_in_transaction_time; PostgreSQL 14+).", _DB),
           "idle_in_transaction_time", 0.001),
    _counter("sessions_total", "sessions", "Sessions established (PostgreSQL 14+)"),
    _counter("sessions_abandoned_total", "sessions_abandoned",
             "Sessions ended because the client went away (PostgreSQL 14+)"),
    _counter("sessions_fatal_total", "sessions_fatal",
             "Sessions ended by a fatal error (PostgreSQL 14+)"),
    _counter("sessions_killed_total", "sessions_killed",
             "Sessions ended by an operator (pg_terminate_backend; PostgreSQL 14+)"),
    CHECKSUM_LAST_FAILURE, RECOVERY_CONFLICTS, STATS_RESET, BACKENDS_BY_STATE, OLDEST_XACT,
    CONNECTIONS, MAX_CONNECTIONS, RESERVED, ROLE_RESERVED,
)
# pg_stat_database_conflicts' columns, by the `cause` label dbgauge gives them.
CONFLICT_CAUSES = {"confl_tablespace": "tablespace", "confl_lock": "lock",
                   "confl_snapshot": "snapshot", "confl_bufferpin": "bufferpin",
                   "confl_deadlock": "deadlock", "confl_active_logicalslot": "logical_slot"}


@dataclass(frozen=True)
class DatabaseStats:
    """One pg_stat_database row: the counters by column name as PostgreSQL reports them
    (blk_read_time, blk_write_time and the session times in milliseconds); NULL values
    are left out of `counters` and kept as None in `columns`, every numeric column of the
    row by name, for the dialects. `name` is "" for the shared-objects row, which has no
    recovery conflicts (`conflicts` None)."""

    name: str
    backends: float | None
    counters: Mapping[str, float]
    stats_reset: float | None = None  # Unix seconds; None if never reset
    oid: str = ""
    columns: Mapping[str, float | None] = field(default_factory=dict)
    conflicts: Mapping[str, float | None] | None = None  # by column (confl_lock...)
    checksum_last_failure: float | None = None  # Unix seconds

    @property
    def shared(self) -> bool:
        """The row of objects shared by every database (datname NULL)."""
        return not self.name


@dataclass(frozen=True)
class Activity:
    """One `activity` row: backends of a database in a state (PostgreSQL's spelling) and
    the age of their oldest open transaction (None when none is in one)."""

    database: str  # "" for backends without a database (background processes)
    state: str
    client: bool
    backends: float
    max_xact_seconds: float | None = None


@dataclass(frozen=True)
class Connections:
    """Client backends by state (every CONNECTION_STATES label, 0 when none) and the
    connection limits: `reserved_connections` is superuser_reserved_connections,
    `role_reserved_connections` the reserved_connections setting (PostgreSQL 16+, None
    before)."""

    by_state: Mapping[str, float]
    max_connections: float | None
    reserved_connections: float | None
    hidden: float = 0.0  # sessions the role cannot see (then by_state is not the server's)
    role: str = ""
    role_reserved_connections: float | None = None

    @property
    def unseen(self) -> str:
        """What the role cannot see, with the grant; "" when it sees every session."""
        return pg_cannot_see(f"{self.hidden:.0f} other session(s) (pg_stat_activity)",
                             self.role) if self.hidden else ""

    @property
    def used(self) -> float:
        return float(sum(self.by_state.values()))

    @property
    def available(self) -> float:
        """The slots an ordinary role can get: max_connections minus the slots reserved
        for superusers and, on PostgreSQL 16+, for pg_use_reserved_connections (the server
        refuses an ordinary role once only those are left)."""
        return ((self.max_connections or 0.0) - (self.reserved_connections or 0.0)
                - (self.role_reserved_connections or 0.0))

    @property
    def limit_text(self) -> str:
        """What `available` is, in the settings' names."""
        return "max_connections - superuser_reserved_connections" + (
            " - reserved_connections" if self.role_reserved_connections is not None else "")


@dataclass(frozen=True)
class PgDatabaseFacts:
    """The facts: every database's statistics (the shared row first), the server's
    connections and its backends by database and state."""

    databases: tuple[DatabaseStats, ...]
    connections: Connections
    activity: tuple[Activity, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every database's name (pg_database's, as pg_stat_database lists them)."""
        return tuple(db.name for db in self.databases if not db.shared)


_NOT_NUMBERS = frozenset({"datid", "datname", "has_conflicts", *CONFLICT_CAUSES})


def _stats(row: Row) -> DatabaseStats:
    columns = {k: number(v) for k, v in row.items() if k not in _NOT_NUMBERS}
    conflicts = {k: number(row.get(k)) for k in CONFLICT_CAUSES if k in row} \
        if is_on(row.get("has_conflicts")) else None
    return DatabaseStats(
        text(row.get("datname")), number(row.get("numbackends")),
        numbers(row, METRICS.column_names), number(row.get("stats_reset")),
        text(row.get("datid")), columns, conflicts, number(row.get("checksum_last_failure")))


def parse_stat_database(rows: Iterable[Row]) -> tuple[DatabaseStats, ...]:
    """`stat_database` rows -> DatabaseStats (a row without `datid` or the conflict
    columns, as captured before they were read, parses too)."""
    return tuple(_stats(row) for row in rows)


def parse_connections(rows: Iterable[Row], limits: Row) -> Connections:
    """`connections` rows (state, connections) and the row carrying the limits ->
    Connections; states outside CONNECTION_STATES are not counted."""
    counts = dict.fromkeys(CONNECTION_STATES.values(), 0.0)
    hidden = 0.0
    for row in rows:
        if row.get("state") is None:  # sessions the role cannot see
            hidden += number(row.get("connections")) or 0.0
            continue
        state = CONNECTION_STATES.get(str(row.get("state")))
        if state is not None:
            counts[state] += number(row.get("connections")) or 0.0
    return Connections(counts, number(limits.get("max_connections")),
                       number(limits.get("reserved_connections")), hidden,
                       text(limits.get("role")), number(limits.get("role_reserved_connections")))


def parse_activity(rows: Iterable[Row]) -> tuple[tuple[Activity, ...], Connections]:
    """`activity` rows -> the backends by database and state, and the client connections
    (the client rows summed by state) with the limits riding on every row."""
    rows = list(rows)
    seen = [r for r in rows if r.get("state") is not None]
    activity = tuple(Activity(text(r.get("datname")), text(r.get("state")),
                              is_on(r.get("client")), number(r.get("backends")) or 0.0,
                              number(r.get("max_xact_seconds"))) for r in seen)
    clients: list[Row] = [{"state": a.state, "connections": a.backends}
                          for a in activity if a.client]
    clients += [{"state": None, "connections": r.get("backends")}  # the role cannot see
                for r in rows if r.get("state") is None]
    return activity, parse_connections(clients, rows[0] if rows else {})


def read_connections(conn: Connection) -> Connections:
    """Client connections by state and the limits: one statement (the limits ride on
    every row), two only for a row-less answer (not seen: dbgauge's own connection is
    always there)."""
    rows = conn.query("connections")
    return parse_connections(rows, rows[0] if rows else conn.query("max_connections")[0])


def read_database(conn: Connection) -> PgDatabaseFacts:
    """Both statements (a third only for a row-less `activity`, never seen)."""
    databases = parse_stat_database(conn.query("stat_database"))
    activity, connections = parse_activity(conn.query("activity"))
    if not activity:
        connections = parse_connections((), conn.query("max_connections")[0])
    return PgDatabaseFacts(databases, connections, activity)


def database_samples(databases: Iterable[DatabaseStats]) -> Iterator[Sample]:
    """Per-database samples (NULL values were left out when read; the shared-objects row
    has no database to name and is not reported)."""
    for db in databases:
        if db.shared:
            continue
        labels = {"database": db.name}
        if db.backends is not None:
            yield Sample(BACKENDS.name, db.backends, labels)
        yield from column_samples(METRICS.columns, db.counters, labels)
        if db.checksum_last_failure is not None:
            yield Sample(CHECKSUM_LAST_FAILURE.name, db.checksum_last_failure, labels)
        for column, value in (db.conflicts or {}).items():
            if value is not None:
                yield Sample(RECOVERY_CONFLICTS.name, value,
                             {**labels, "cause": CONFLICT_CAUSES[column]})
        if db.stats_reset is not None:
            yield Sample(STATS_RESET.name, db.stats_reset, labels)


def by_database_and_state(facts: PgDatabaseFacts) -> dict[tuple[str, str], tuple[float, float]]:
    """(database, PostgreSQL's state) -> (backends, oldest transaction age or 0) for every
    database and every state of CONNECTION_STATES, 0 where none (what postgres_exporter's
    pg_stat_activity query returns); backends without a database are not counted."""
    out = {(db, state): (0.0, 0.0) for db in facts.names for state in CONNECTION_STATES}
    for a in facts.activity:
        key = (a.database, a.state)
        if key not in out:
            continue
        count, age = out[key]
        oldest = a.max_xact_seconds if a.max_xact_seconds is not None else 0.0
        out[key] = (count + a.backends, max(age, oldest) if count else oldest)
    return out


def activity_samples(facts: PgDatabaseFacts) -> Iterator[Sample]:
    """Backends and oldest transaction age by database and state, every pair present."""
    for (database, state), (count, age) in by_database_and_state(facts).items():
        labels = {"database": database, "state": CONNECTION_STATES[state]}
        yield Sample(BACKENDS_BY_STATE.name, count, labels)
        yield Sample(OLDEST_XACT.name, age, labels)


def connection_samples(connections: Connections) -> Iterator[Sample]:
    """One sample per known state (0 if none), then the limits."""
    for state, value in connections.by_state.items():
        yield Sample(CONNECTIONS.name, value, {"state": state})
    yield from limit_samples(connections)


def limit_samples(connections: Connections) -> Iterator[Sample]:
    """The limits: max_connections and the reserved slots (reserved_connections on 16+)."""
    yield from present(((MAX_CONNECTIONS, connections.max_connections),
                        (RESERVED, connections.reserved_connections),
                        (ROLE_RESERVED, connections.role_reserved_connections)))


class PostgresDatabase(Collector[PgDatabaseFacts]):
    name = "postgres_database"
    help = ("pg_stat_database per database (backends, commits, rollbacks, block reads and hits, "
            "tuples, temp files, deadlocks, conflicts by cause, checksum failures, I/O time, "
            "session statistics); backends and oldest transaction by database and state; "
            "client connections by state against max_connections.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    metrics = METRICS

    def read(self, conn: Connection) -> PgDatabaseFacts:
        return read_database(conn)

    def samples(self, facts: PgDatabaseFacts) -> Iterable[Sample]:
        yield from database_samples(facts.databases)
        if (why := self.incomplete(facts)) is not None:  # pg_stat_database stands
            yield from limit_samples(facts.connections)
            raise Incomplete(why)
        yield from activity_samples(facts)
        yield from connection_samples(facts.connections)

    def incomplete(self, facts: PgDatabaseFacts) -> str | None:
        return facts.connections.unseen or None
