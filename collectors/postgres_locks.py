"""postgres_locks: who waits for a lock, who blocks, and transactions held open too long.

postgres_exporter's `pg_locks_count` counts every pg_locks row by mode, granted or not,
so a busy healthy server and a server where everyone waits on one `LOCK TABLE` look
alike. This collector counts only backends that *wait*, by lock type and mode, measures
the oldest wait, and uses pg_blocking_pids() to count blocked backends, distinct
blockers and root blockers (blockers not themselves blocked: the sessions to look at
first). Long transactions and idle-in-transaction sessions, the usual root blockers and
the usual cause of vacuum falling behind, come with their ages. Every lock, granted or
awaited, is also counted by database and mode, every pair present: the lock table is
shared and finite, and an alert on its use must see the granted ones too.

Label values are bounded: lock types and modes outside PostgreSQL's documented sets
are reported as "other". `read` returns `PgLockFacts`; `read_summary` is its first half,
which `check locks` uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import Incomplete, NotVisible
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, present

LOCK_TYPES = frozenset({
    "relation", "extend", "frozenid", "page", "tuple", "transactionid", "virtualxid",
    "spectoken", "object", "userlock", "advisory", "applytransaction",
})
LOCK_MODES = frozenset({
    "AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
    "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock",
})
# The modes pg_locks shows for database-scoped locks: the table-level modes and the
# predicate locks of serializable transactions (SIReadLock).
COUNTED_MODES = (
    "AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
    "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock",
    "SIReadLock",
)

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
LOCKS = MetricSpec(
    _P + "locks", "gauge",
    "Heavyweight locks held or awaited in each database (pg_locks rows of the database, "
    "granted or not), by mode; every database and mode is present (0 when none), modes "
    "outside PostgreSQL's documented set are counted as other. Compare the sum with "
    "max_locks_per_transaction * (max_connections + max_prepared_transactions).",
    ("database", "mode"))
METRICS = MetricTable(LOCKS, WAITS, WAITING, BLOCKED, BLOCKERS, ROOT_BLOCKERS, OLDEST_WAIT,
                      OLDEST_XACT, IDLE_IN_XACT, IDLE_IN_XACT_AGE)


@dataclass(frozen=True)
class LockSummary:
    """The one `lock_summary` row; NULL (nothing to measure) is 0."""

    waiting_backends: float = 0.0
    blocked_backends: float = 0.0
    blocking_backends: float = 0.0
    root_blockers: float = 0.0
    oldest_wait_seconds: float = 0.0
    oldest_xact_seconds: float = 0.0
    idle_in_transaction: float = 0.0
    idle_in_transaction_oldest_seconds: float = 0.0
    hidden_sessions: float = 0.0  # sessions the role cannot see: the values are not facts
    role: str = ""

    @property
    def unseen(self) -> str:
        """What the role cannot see, with the grant; "" when it sees every session."""
        return pg_cannot_see(f"{self.hidden_sessions:.0f} other session(s) "
                             "(pg_stat_activity)", self.role) if self.hidden_sessions else ""

    def seen(self) -> LockSummary:
        """This summary, or NotVisible naming the grant when the role cannot see every
        session (what a check needs before it reports an age or a count)."""
        if self.hidden_sessions:
            raise NotVisible(self.unseen)
        return self


@dataclass(frozen=True)
class LockWait:
    """One `lock_waits` row: backends waiting for a lock type in a mode (as PostgreSQL
    names them; bounded to known values only when turned into samples)."""

    locktype: str
    mode: str
    backends: int


@dataclass(frozen=True)
class LockCount:
    """One `lock_counts` row: locks of a database in a mode (PostgreSQL's spelling; "" for
    a database that holds none)."""

    database: str
    mode: str
    locks: float


@dataclass(frozen=True)
class PgLockFacts:
    """The facts: the summary, the waits by type and mode (read only when a backend
    waits, else empty), and every lock by database and mode (all a dialect reads)."""

    summary: LockSummary | None  # None: not read (only a dialect's samples were made)
    waits: tuple[LockWait, ...] = ()
    counts: tuple[LockCount, ...] = ()

    def by_database_and_mode(self) -> dict[tuple[str, str], float]:
        """(database, mode) -> locks for every database and every COUNTED_MODES mode (0
        where none), then (database, other mode) pairs that occur."""
        out = {(c.database, mode): 0.0 for c in self.counts for mode in COUNTED_MODES}
        for c in self.counts:
            if c.mode:
                out[(c.database, c.mode)] = out.get((c.database, c.mode), 0.0) + c.locks
        return out


def parse_summary(row: Row) -> LockSummary:
    """The `lock_summary` row (columns named like LockSummary's fields) -> LockSummary."""
    values = {f.name: number(row.get(f.name)) or 0.0 for f in fields(LockSummary)
              if f.name != "role"}
    return LockSummary(**values, role=text(row.get("role")))


def parse_waits(rows: Iterable[Row]) -> tuple[LockWait, ...]:
    """`lock_waits` rows (locktype, mode, backends) -> LockWait."""
    return tuple(LockWait(str(row.get("locktype")), str(row.get("mode")),
                          int(number(row.get("backends")) or 0)) for row in rows)


def parse_counts(rows: Iterable[Row]) -> tuple[LockCount, ...]:
    """`lock_counts` rows (datname, mode, locks) -> LockCount."""
    return tuple(LockCount(text(row.get("datname")), text(row.get("mode")),
                           number(row.get("locks")) or 0.0) for row in rows)


def count_samples(facts: PgLockFacts) -> Iterator[Sample]:
    """Every lock by database and mode, other modes summed as `other`."""
    counts: dict[tuple[str, str], float] = {}
    for (database, mode), locks in facts.by_database_and_mode().items():
        key = (database, mode if mode in COUNTED_MODES else "other")
        counts[key] = counts.get(key, 0.0) + locks
    for (database, mode), locks in counts.items():
        yield Sample(LOCKS.name, float(locks), {"database": database, "mode": mode})


def read_summary(conn: Connection) -> LockSummary:
    """The summary alone: one statement."""
    return parse_summary(conn.query("lock_summary")[0])


def wait_samples(waits: Iterable[LockWait]) -> Iterator[Sample]:
    """Waits -> bounded-label samples, summed per (type, mode) after bounding."""
    counts: Counter[tuple[str, str]] = Counter()
    for wait in waits:
        key = (wait.locktype if wait.locktype in LOCK_TYPES else "other",
               wait.mode if wait.mode in LOCK_MODES else "other")
        counts[key] += wait.backends
    for (locktype, mode), value in sorted(counts.items()):
        yield Sample(WAITS.name, float(value), {"locktype": locktype, "mode": mode})


def summary_samples(s: LockSummary) -> Iterator[Sample]:
    """The always-present gauges."""
    return present(((WAITING, s.waiting_backends), (BLOCKED, s.blocked_backends),
                    (BLOCKERS, s.blocking_backends), (ROOT_BLOCKERS, s.root_blockers),
                    (OLDEST_WAIT, s.oldest_wait_seconds), (OLDEST_XACT, s.oldest_xact_seconds),
                    (IDLE_IN_XACT, s.idle_in_transaction),
                    (IDLE_IN_XACT_AGE, s.idle_in_transaction_oldest_seconds)))


class PostgresLocks(Collector[PgLockFacts]):
    name = "postgres_locks"
    help = ("Every lock by database and mode; lock waits by type and mode, oldest wait, "
            "blocked backends and distinct/root blockers (pg_blocking_pids), oldest "
            "transaction, idle-in-transaction sessions.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS

    def read(self, conn: Connection) -> PgLockFacts:
        summary = read_summary(conn)
        counts = parse_counts(conn.query("lock_counts"))
        if not summary.waiting_backends:
            return PgLockFacts(summary, (), counts)  # nothing waits: no lock_waits
        return PgLockFacts(summary, parse_waits(conn.query("lock_waits")), counts)

    def read_for_dialects(self, conn: Connection) -> PgLockFacts:
        """The counts alone (postgres_exporter's pg_locks_count): the summary and waits
        statements feed dbgauge's own families only."""
        return PgLockFacts(None, (), parse_counts(conn.query("lock_counts")))

    def samples(self, facts: PgLockFacts) -> Iterable[Sample]:
        why = self.incomplete(facts)
        if facts.summary is not None and why is None:
            yield from summary_samples(facts.summary)
            yield from wait_samples(facts.waits)
        yield from count_samples(facts)  # pg_locks: every role sees every lock
        if why is not None:
            raise Incomplete(why)

    def incomplete(self, facts: PgLockFacts) -> str | None:
        return (facts.summary.unseen or None) if facts.summary is not None else None
