"""mysql_lock_waits: who is stuck behind whom, as a handful of bounded gauges.

mysqld_exporter has no row-lock-wait collector. This one answers the on-call questions
without a label per query or thread: how many transactions wait for a row lock and for
how long; how many transactions block them, how many of those are heads of a chain
(blocking without waiting themselves), how many are idle sessions sitting on an open
transaction, the most waiters behind one blocker; the oldest transaction (purge and
history list length follow it); and metadata lock waits (the ALTER TABLE pile-up).

Sources: INNODB_TRX (both flavors); the wait graph from performance_schema.data_lock_waits
on MySQL 8 and information_schema.INNODB_LOCK_WAITS on MariaDB, read by the one pure
`summarize_lock_waits`; metadata locks from performance_schema.metadata_locks where it is
instrumented, else from thread states in the processlist. `read` returns `LockWaitFacts`
(also what `check locks` judges); `samples` maps them to metrics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PROCESS, PS_SELECT, query
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample
from dbgauge.toolkit.sql import load_sql

TRANSACTIONS = MetricSpec(
    "dbgauge_mysql_innodb_transactions", "gauge",
    "Open InnoDB transactions by state: running, lock_wait, rolling_back, committing "
    "(information_schema.INNODB_TRX).", ("state",))
OLDEST_TRX = MetricSpec(
    "dbgauge_mysql_innodb_oldest_transaction_seconds", "gauge",
    "Age of the oldest open InnoDB transaction (within 0.5 s: INNODB_TRX keeps whole seconds); "
    "0 when none is open. A long one holds locks and stops purge (history list length grows).")
WAITING = MetricSpec(
    "dbgauge_mysql_lock_waiting_transactions", "gauge",
    "InnoDB transactions waiting for a row (or InnoDB table) lock right now "
    "(INNODB_TRX state LOCK WAIT).")
OLDEST_WAIT = MetricSpec(
    "dbgauge_mysql_lock_oldest_wait_seconds", "gauge",
    "How long the longest current row lock wait has lasted (within 0.5 s); 0 when nothing "
    "waits. Waits end at innodb_lock_wait_timeout.")
BLOCKERS = MetricSpec(
    "dbgauge_mysql_lock_blocking_transactions", "gauge",
    "Distinct transactions holding a lock another transaction waits for "
    "(data_lock_waits on MySQL 8, INNODB_LOCK_WAITS on MariaDB).")
ROOT_BLOCKERS = MetricSpec(
    "dbgauge_mysql_lock_root_blocking_transactions", "gauge",
    "Blocking transactions that are not waiting themselves: the heads of the wait chains, "
    "the ones to look at (or kill) first.")
MAX_WAITERS = MetricSpec(
    "dbgauge_mysql_lock_max_waiters_per_blocker", "gauge",
    "The most transactions directly waiting on one blocking transaction; 0 when none.")
IDLE_BLOCKERS = MetricSpec(
    "dbgauge_mysql_lock_idle_blocking_transactions", "gauge",
    "Blocking transactions whose session runs no statement: an application left a "
    "transaction open while holding locks.")
OLDEST_BLOCKER = MetricSpec(
    "dbgauge_mysql_lock_oldest_blocker_seconds", "gauge",
    "Age of the oldest blocking transaction (within 0.5 s); 0 when nothing blocks.")
MDL_INSTRUMENTED = MetricSpec(
    "dbgauge_mysql_metadata_lock_instrumented", "gauge",
    "1 if performance_schema.metadata_locks is being filled (the metadata lock series come "
    "from it), 0 if they come from processlist thread states instead (MariaDB's default).")
MDL_WAITING = MetricSpec(
    "dbgauge_mysql_metadata_lock_waiting_threads", "gauge",
    "Threads waiting for a metadata lock (table, schema, routine, global read, commit or "
    "backup lock), e.g. DDL behind a long transaction and everything queued behind the DDL.")
MDL_OLDEST = MetricSpec(
    "dbgauge_mysql_metadata_lock_oldest_wait_seconds", "gauge",
    "How long the longest current metadata lock wait has lasted, seconds; 0 when none.")
METRICS = MetricTable(TRANSACTIONS, OLDEST_TRX, WAITING, OLDEST_WAIT, BLOCKERS, ROOT_BLOCKERS,
                      MAX_WAITERS, IDLE_BLOCKERS, OLDEST_BLOCKER, MDL_INSTRUMENTED,
                      MDL_WAITING, MDL_OLDEST)

_STATES = ("running", "lock_wait", "rolling_back", "committing")
_MAX_BLOCKERS_LOOKED_UP = 1000  # bounds the IN (...) list of lock_blockers


@dataclass(frozen=True)
class LockGraph:
    """The wait-for graph between transactions, reduced to what is exported."""

    waiting: frozenset[str]
    blockers: frozenset[str]
    max_waiters_per_blocker: int

    @property
    def root_blockers(self) -> frozenset[str]:
        return self.blockers - self.waiting


def summarize_lock_waits(rows: Iterable[Row]) -> LockGraph:
    """data_lock_waits-shaped rows (REQUESTING_/BLOCKING_ENGINE_TRANSACTION_ID) -> LockGraph.

    Both flavors' SQL return these two columns; one row per waiting lock and blocking
    lock pair, so the same two transactions may appear more than once.
    """
    pairs = {(text(r.get("REQUESTING_ENGINE_TRANSACTION_ID")),
              text(r.get("BLOCKING_ENGINE_TRANSACTION_ID"))) for r in rows}
    pairs = {(w, b) for w, b in pairs if w and b}
    per_blocker = Counter(b for _, b in pairs)
    return LockGraph(frozenset(w for w, _ in pairs), frozenset(per_blocker),
                     max(per_blocker.values(), default=0))


@dataclass(frozen=True)
class TrxSummary:
    """INNODB_TRX grouped by state."""

    by_state: Mapping[str, int]
    oldest_seconds: float
    oldest_wait_seconds: float

    @property
    def waiting(self) -> int:
        return self.by_state["lock_wait"]


def summarize_transactions(rows: Iterable[Row]) -> TrxSummary:
    """innodb_trx_summary rows (trx_state, transactions, oldest_seconds, ...) -> TrxSummary."""
    by_state = dict.fromkeys(_STATES, 0)
    oldest = oldest_wait = 0.0
    for row in rows:
        state = text(row.get("trx_state")).strip().lower().replace(" ", "_")
        if not state:
            continue
        by_state[state] = by_state.get(state, 0) + int(number(row.get("transactions")) or 0)
        oldest = max(oldest, number(row.get("oldest_seconds")) or 0.0)
        if state == "lock_wait":
            oldest_wait = max(oldest_wait, number(row.get("oldest_wait_seconds")) or 0.0)
    return TrxSummary(by_state, oldest, oldest_wait)


def read_transactions(conn: Connection) -> TrxSummary:
    """INNODB_TRX by state alone (`check txn-time`): one statement."""
    return summarize_transactions(query(conn, "innodb_trx_summary", PROCESS))


@dataclass(frozen=True)
class MetadataLocks:
    """Metadata lock waits, from performance_schema or (not instrumented) the processlist."""

    instrumented: bool
    waiting: float
    oldest_wait_seconds: float


@dataclass(frozen=True)
class LockWaitFacts:
    """What the collector read: transactions by state, the wait graph (empty, and not
    read, when nobody waits), the blockers' idleness and age, and metadata lock waits."""

    transactions: TrxSummary
    graph: LockGraph
    idle_blockers: int
    oldest_blocker_seconds: float
    metadata: MetadataLocks


def _as_id(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def read_blockers(conn: Connection, graph: LockGraph) -> tuple[int, float]:
    """(idle blockers, oldest blocker age); one more statement only if something blocks."""
    if not graph.blockers:
        return 0, 0.0
    ids = [_as_id(b) for b in sorted(graph.blockers)][:_MAX_BLOCKERS_LOOKED_UP]
    sql = load_sql(conn.server.flavor, "lock_blockers", conn.server.version)
    sql = sql.replace("{ids}", ", ".join(["%s"] * len(ids)))
    rows = query(conn, "lock_blockers", PROCESS, tuple(ids), sql=sql)
    idle = sum(1 for r in rows if number(r.get("idle")))
    oldest = max((number(r.get("age_seconds")) or 0.0 for r in rows), default=0.0)
    return idle, oldest


def read_metadata_locks(conn: Connection) -> MetadataLocks:
    """From performance_schema where instrumented, else from processlist thread states
    (MariaDB answers both in one round trip)."""
    row = query(conn, "metadata_lock_waits", PS_SELECT)[0]
    instrumented = is_on(row.get("performance_schema")) and all(
        is_on(row.get(col)) for col in ("mdl_instrument", "global_consumer"))
    waiting, oldest = row.get("waiting"), row.get("oldest_wait_seconds")
    if not instrumented and "processlist_waiting" in row:  # MariaDB: same round trip
        waiting, oldest = row["processlist_waiting"], row["processlist_oldest_wait_seconds"]
    elif not instrumented:
        fallback = query(conn, "metadata_lock_waits_processlist", PROCESS)[0]
        waiting, oldest = fallback["waiting"], fallback["oldest_wait_seconds"]
    return MetadataLocks(instrumented, number(waiting) or 0.0, number(oldest) or 0.0)


def read_lock_waits(conn: Connection) -> LockWaitFacts:
    """Transactions by state, then the wait graph and its blockers only when something
    waits, then metadata lock waits."""
    trx = read_transactions(conn)
    graph = summarize_lock_waits([])
    if trx.waiting:  # nobody waits: no wait graph to read (the common case)
        needs = PS_SELECT if conn.server.flavor == "mysql" else PROCESS
        graph = summarize_lock_waits(query(conn, "lock_waits", needs))
    idle, oldest_blocker = read_blockers(conn, graph)
    return LockWaitFacts(trx, graph, idle, oldest_blocker, read_metadata_locks(conn))


class MySQLLockWaits(Collector[LockWaitFacts]):
    name = "mysql_lock_waits"
    help = ("Row lock waits (waiting transactions, oldest wait, blockers, chain heads, idle "
            "blockers, most waiters per blocker), the oldest transaction and metadata lock "
            "waits; bounded labels only.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> LockWaitFacts:
        return read_lock_waits(conn)

    def samples(self, facts: LockWaitFacts) -> Iterable[Sample]:
        trx, graph, mdl = facts.transactions, facts.graph, facts.metadata
        for state, count in trx.by_state.items():
            yield Sample(TRANSACTIONS.name, float(count), {"state": state})
        yield Sample(OLDEST_TRX.name, trx.oldest_seconds)
        yield Sample(WAITING.name, float(trx.waiting))
        yield Sample(OLDEST_WAIT.name, trx.oldest_wait_seconds)
        yield Sample(BLOCKERS.name, float(len(graph.blockers)))
        yield Sample(ROOT_BLOCKERS.name, float(len(graph.root_blockers)))
        yield Sample(MAX_WAITERS.name, float(graph.max_waiters_per_blocker))
        yield Sample(IDLE_BLOCKERS.name, float(facts.idle_blockers))
        yield Sample(OLDEST_BLOCKER.name, facts.oldest_blocker_seconds)
        yield Sample(MDL_INSTRUMENTED.name, 1.0 if mdl.instrumented else 0.0)
        yield Sample(MDL_WAITING.name, mdl.waiting)
        yield Sample(MDL_OLDEST.name, mdl.oldest_wait_seconds)
