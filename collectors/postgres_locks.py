"""postgres_locks: who waits for a lock, who blocks, and transactions held open too long.

postgres_exporter's `pg_locks_count` counts every pg_locks row by mode, granted or not,
so a busy healthy server and a server where everyone waits on one `LOCK TABLE` look
alike. This collector counts only backends that *wait*, by lock type and mode, measures
the oldest wait, and uses pg_blocking_pids() to count blocked backends, distinct
blockers and root blockers (blockers not themselves blocked: the sessions to look at
first). Long transactions and idle-in-transaction sessions, the usual root blockers and
the usual cause of vacuum falling behind, come with their ages.

Label values are bounded: lock types and modes outside PostgreSQL's documented sets
are reported as "other".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

LOCK_TYPES = frozenset({
    "relation", "extend", "frozenid", "page", "tuple", "transactionid", "virtualxid",
    "spectoken", "object", "userlock", "advisory", "applytransaction",
})
LOCK_MODES = frozenset({
    "AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
    "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock",
})

_P = "dbgauge_postgres_"
WAITS = MetricSpec(
    _P + "lock_waits", "gauge",
    "Backends waiting for a heavyweight lock (pg_locks, granted = false), by lock type and "
    "requested mode; only combinations that occur are reported (absent means 0).",
    ("locktype", "mode"))
WAITING = MetricSpec(
    _P + "lock_waiting_backends", "gauge",
    "Backends waiting for a heavyweight lock now (wait_event_type Lock).")
BLOCKED = MetricSpec(
    _P + "lock_blocked_backends", "gauge",
    "Backends whose lock wait is blocked by another backend (non-empty pg_blocking_pids).")
BLOCKERS = MetricSpec(
    _P + "lock_blocking_backends", "gauge",
    "Distinct backends blocking at least one other backend (union of pg_blocking_pids).")
ROOT_BLOCKERS = MetricSpec(
    _P + "lock_root_blockers", "gauge",
    "Blocking backends that are not blocked themselves: the heads of the wait chains.")
OLDEST_WAIT = MetricSpec(
    _P + "lock_oldest_wait_seconds", "gauge",
    "Longest current lock wait (now - pg_locks.waitstart; on PostgreSQL 13 the waiting "
    "statement's age, an upper bound); 0 when nothing waits.")
OLDEST_XACT = MetricSpec(
    _P + "oldest_transaction_age_seconds", "gauge",
    "Age of the oldest open transaction of a client backend (now - xact_start); 0 when none "
    "is open. dbgauge's own session is not counted.")
IDLE_IN_XACT = MetricSpec(
    _P + "idle_in_transaction_sessions", "gauge",
    "Sessions idle inside an open transaction (state idle in transaction, aborted or not).")
IDLE_IN_XACT_AGE = MetricSpec(
    _P + "idle_in_transaction_oldest_seconds", "gauge",
    "How long the longest idle-in-transaction session has been idle (now - state_change); "
    "0 when there is none.")

_SUMMARY = (
    (WAITING, "waiting_backends"), (BLOCKED, "blocked_backends"),
    (BLOCKERS, "blocking_backends"), (ROOT_BLOCKERS, "root_blockers"),
    (OLDEST_WAIT, "oldest_wait_seconds"), (OLDEST_XACT, "oldest_xact_seconds"),
    (IDLE_IN_XACT, "idle_in_transaction"),
    (IDLE_IN_XACT_AGE, "idle_in_transaction_oldest_seconds"),
)

Row = Mapping[str, Any]


def wait_samples(rows: Iterable[Row]) -> Iterator[Sample]:
    """`lock_waits` rows (locktype, mode, backends) -> bounded-label samples."""
    counts: Counter[tuple[str, str]] = Counter()
    for row in rows:
        locktype = str(row.get("locktype"))
        mode = str(row.get("mode"))
        key = (locktype if locktype in LOCK_TYPES else "other",
               mode if mode in LOCK_MODES else "other")
        counts[key] += int(number(row.get("backends")) or 0)
    for (locktype, mode), value in sorted(counts.items()):
        yield Sample(WAITS.name, float(value), {"locktype": locktype, "mode": mode})


def summary_samples(row: Row) -> Iterator[Sample]:
    """The one `lock_summary` row -> the always-present gauges."""
    for spec, column in _SUMMARY:
        yield Sample(spec.name, number(row.get(column)) or 0.0)


class PostgresLocks(Collector):
    name = "postgres_locks"
    help = ("Lock waits by type and mode, oldest wait, blocked backends and distinct/root "
            "blockers (pg_blocking_pids), oldest transaction, idle-in-transaction sessions.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = (WAITS, *(spec for spec, _ in _SUMMARY))

    def collect(self, conn: Connection) -> Iterable[Sample]:
        summary = conn.query("lock_summary")[0]
        yield from summary_samples(summary)
        if number(summary.get("waiting_backends")):
            # Skipped when nothing waits: the common case costs one round trip, not two.
            yield from wait_samples(conn.query("lock_waits"))
