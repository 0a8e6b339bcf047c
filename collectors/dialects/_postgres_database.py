"""postgres_exporter's per-database families: pg_stat_database (with the conflicts view),
pg_stat_activity and pg_locks, from postgres_database's and postgres_locks' facts.

Debian's 0.11 builds them from its built-in queries: every column of the view becomes
`pg_stat_database_<column>`, labelled datid, datname and server (the shared-objects row
too, as datname ""); NULL is NaN; a timestamp is whole Unix seconds; columns its map does
not know (checksums, PostgreSQL 14's session statistics...) are untyped "Unknown metric".
Upstream's collector keeps those names (without `server`) and adds
`pg_stat_database_active_time_seconds_total`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from dbgauge.collectors.postgres_database import (
    CONFLICT_CAUSES,
    PgDatabaseFacts,
    by_database_and_state,
)
from dbgauge.collectors.postgres_locks import COUNTED_MODES, PgLockFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import MetricType, Sample

_DB = ("datid", "datname", "server")
NAN = math.nan


def _value(value: float | None, timestamp: bool = False) -> float:
    """A column as the peer reads it: NULL NaN, a timestamp in whole seconds."""
    if value is None:
        return NAN
    return float(math.floor(value)) if timestamp else value


# pg_stat_database's columns in 0.11's map: (column, type, ours)
_KNOWN: tuple[tuple[str, MetricType, str], ...] = (
    ("numbackends", "gauge", "dbgauge_postgres_database_backends"),
    ("xact_commit", "counter", "dbgauge_postgres_database_xact_commits_total"),
    ("xact_rollback", "counter", "dbgauge_postgres_database_xact_rollbacks_total"),
    ("blks_read", "counter", "dbgauge_postgres_database_blocks_read_total"),
    ("blks_hit", "counter", "dbgauge_postgres_database_blocks_hit_total"),
    ("tup_returned", "counter", "dbgauge_postgres_database_tuples_returned_total"),
    ("tup_fetched", "counter", "dbgauge_postgres_database_tuples_fetched_total"),
    ("tup_inserted", "counter", "dbgauge_postgres_database_tuples_inserted_total"),
    ("tup_updated", "counter", "dbgauge_postgres_database_tuples_updated_total"),
    ("tup_deleted", "counter", "dbgauge_postgres_database_tuples_deleted_total"),
    ("conflicts", "counter", "dbgauge_postgres_database_conflicts_total"),
    ("temp_files", "counter", "dbgauge_postgres_database_temp_files_total"),
    ("temp_bytes", "counter", "dbgauge_postgres_database_temp_bytes_total"),
    ("deadlocks", "counter", "dbgauge_postgres_database_deadlocks_total"),
    ("blk_read_time", "counter", "dbgauge_postgres_database_block_read_seconds_total"),
    ("blk_write_time", "counter", "dbgauge_postgres_database_block_write_seconds_total"),
    ("stats_reset", "counter", "dbgauge_postgres_database_stats_reset_timestamp_seconds"),
)
# Columns 0.11's map lacks (exported untyped), PostgreSQL 13 to 18.
_UNKNOWN = (
    ("checksum_failures", "dbgauge_postgres_database_checksum_failures_total"),
    ("checksum_last_failure",
     "dbgauge_postgres_database_checksum_last_failure_timestamp_seconds"),
    ("session_time", "dbgauge_postgres_database_session_seconds_total"),
    ("active_time", "dbgauge_postgres_database_active_seconds_total"),
    ("idle_in_transaction_time", "dbgauge_postgres_database_idle_in_transaction_seconds_total"),
    ("sessions", "dbgauge_postgres_database_sessions_total"),
    ("sessions_abandoned", "dbgauge_postgres_database_sessions_abandoned_total"),
    ("sessions_fatal", "dbgauge_postgres_database_sessions_fatal_total"),
    ("sessions_killed", "dbgauge_postgres_database_sessions_killed_total"),
    ("parallel_workers_to_launch", ""),
    ("parallel_workers_launched", ""),
)
_TIMESTAMPS = frozenset({"stats_reset", "checksum_last_failure"})
_MS = "milliseconds in the peer's series, seconds in dbgauge's"

ACTIVE_TIME_SECONDS = PeerSpec(
    "pg_stat_database_active_time_seconds_total", "counter",
    "Time spent executing SQL statements in this database, in seconds", ("datid", "datname"))
ACTIVITY_COUNT = PeerSpec("pg_stat_activity_count", "gauge",
                          "number of connections in this state", ("datname", "state", "server"))
ACTIVITY_MAX_TX = PeerSpec(
    "pg_stat_activity_max_tx_duration", "gauge",
    "max duration in seconds any active transaction has been running",
    ("datname", "state", "server"))
LOCKS_COUNT = PeerSpec("pg_locks_count", "gauge", "Number of locks", ("datname", "mode", "server"))


def _families() -> Iterator[PeerFamily]:
    for column, type_, ours in _KNOWN:
        note = _MS if column.endswith("_time") else ""
        yield PeerFamily(PeerSpec(f"pg_stat_database_{column}", type_,
                                  f"pg_stat_database.{column}", _DB), ours, note)
    for column, ours in _UNKNOWN:
        note = _MS if column.endswith("_time") else ""
        yield PeerFamily(PeerSpec(f"pg_stat_database_{column}", "untyped",
                                  "Unknown metric from pg_stat_database", _DB), ours, note)
    yield PeerFamily(ACTIVE_TIME_SECONDS, "dbgauge_postgres_database_active_seconds_total")
    for column, cause in CONFLICT_CAUSES.items():
        known = column != "confl_active_logicalslot"  # PostgreSQL 16+, not in 0.11's map
        yield PeerFamily(PeerSpec(
            f"pg_stat_database_conflicts_{column}", "counter" if known else "untyped",
            f"pg_stat_database_conflicts.{column}" if known
            else "Unknown metric from pg_stat_database_conflicts", _DB),
            f"dbgauge_postgres_database_recovery_conflicts_total{{cause=\"{cause}\"}}")
    yield PeerFamily(ACTIVITY_COUNT, "dbgauge_postgres_backends",
                     "state as PostgreSQL spells it (idle in transaction), dbgauge's label "
                     "uses underscores")
    yield PeerFamily(ACTIVITY_MAX_TX, "dbgauge_postgres_backends_oldest_transaction_seconds")
    yield PeerFamily(LOCKS_COUNT, "dbgauge_postgres_locks",
                     "mode lowercased (accesssharelock), dbgauge keeps PostgreSQL's spelling")


FAMILIES = PeerFamilies(*_families())
# (column, family name, whether a timestamp), the names made once rather than per sample
_COLUMNS = tuple((c, f"pg_stat_database_{c}", c in _TIMESTAMPS)
                 for c in (*(c for c, _, _ in _KNOWN), *(c for c, _ in _UNKNOWN)))


def stat_database(facts: PgDatabaseFacts) -> Iterator[Sample]:
    """pg_stat_database_* and pg_stat_database_conflicts_* of every row; then
    pg_stat_activity_* (every database and state)."""
    sample = FAMILIES.sample
    for db in facts.databases:
        labels = {"datid": db.oid, "datname": db.name}
        columns = db.columns
        for column, name, timestamp in _COLUMNS:
            if column in columns:
                yield sample(name, _value(columns[column], timestamp), labels)
        active = db.columns.get("active_time")
        if active is not None and not db.shared:
            yield sample(ACTIVE_TIME_SECONDS.name, active / 1000.0, labels)
        for column, value in (db.conflicts or {}).items():
            yield sample(f"pg_stat_database_conflicts_{column}", _value(value), labels)
    if facts.connections.hidden:  # counts of what the role sees are not the server's
        return
    for (database, state), (count, age) in by_database_and_state(facts).items():
        labels = {"datname": database, "state": state}
        yield sample(ACTIVITY_COUNT.name, count, labels)
        yield sample(ACTIVITY_MAX_TX.name, age, labels)


def locks(facts: PgLockFacts) -> Iterator[Sample]:
    """pg_locks_count: every database and the peer's nine modes, lowercased."""
    for (database, mode), count in facts.by_database_and_mode().items():
        if mode in COUNTED_MODES:
            yield FAMILIES.sample(LOCKS_COUNT.name, count,
                                  {"datname": database, "mode": mode.lower()})


TRANSLATE = {"postgres_database": stat_database, "postgres_locks": locks}
