"""postgres_activity: what pg_stat_activity says about sessions that hold things up: open
transactions (how many, the oldest one's age), the autovacuum workers at work (on which
table, for how long) and how long idle sessions have been idle, by state and
application_name (a histogram).

An old open transaction holds back VACUUM's horizon and every row version since; a
session idle in a transaction does the same while doing nothing; an autovacuum worker that
has run for hours on one table is why the others wait. Opt-in, as the postgres_exporter
collectors it stands for are (long_running_transactions, stat_activity_autovacuum,
process_idle): the sessions are selected as they select them. Sessions the role cannot
see (another role's, without pg_read_all_stats) would make every number a guess: the
collector fails naming the grant, after the samples that stand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import Incomplete
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

_P = "dbgauge_postgres_"
# postgres_exporter's process_idle buckets (collector/pg_process_idle.go), in seconds.
IDLE_BOUNDS = (1.0, 2.0, 5.0, 15.0, 30.0, 60.0, 90.0, 120.0, 300.0)

OPEN = MetricSpec(_P + "open_transactions", "gauge",
                  "Sessions in a transaction now, not idle, autovacuum's and dbgauge's own "
                  "left out (pg_stat_activity, as postgres_exporter's "
                  "long_running_transactions).")
OLDEST = MetricSpec(_P + "open_transactions_oldest_seconds", "gauge",
                    "Age of the oldest of those transactions (now - xact_start); absent "
                    "when there is none.")
AUTOVACUUM = MetricSpec(_P + "autovacuum_worker_seconds", "gauge",
                        "How long each autovacuum worker at work has been in its "
                        "transaction (now - xact_start), by database, table as its query "
                        "names it, and operation (VACUUM, ANALYZE, ...).",
                        ("database", "table", "operation"))
IDLE = MetricSpec(_P + "idle_session_seconds", "histogram",
                  "Sessions idle now, by state (idle, idle in transaction, ...) and "
                  "application_name, by how long they have been idle (now - state_change); "
                  "dbgauge's own left out. The sum adds whole seconds.",
                  ("state", "application_name"))
METRICS = MetricTable(OPEN, OLDEST, AUTOVACUUM, IDLE)

_WORKER = re.compile(r"^autovacuum: (VACUUM ANALYZE|VACUUM|ANALYZE|BRIN summarize) (\S+)")


@dataclass(frozen=True)
class Autovacuum:
    """One autovacuum worker: its database, query, postgres_exporter's relname
    (SPLIT_PART(query, '.', 2)), xact_start in Unix seconds and its age (None if NULL)."""

    database: str
    query: str
    relname: str
    started: float | None
    age: float | None

    @property
    def table(self) -> tuple[str, str]:
        """(table as the query names it, operation); the query's text if it is not
        autovacuum's usual one."""
        m = _WORKER.match(self.query)
        return (m.group(2), m.group(1)) if m else (self.query, "")


@dataclass(frozen=True)
class IdleSession:
    """One idle session: its state and application_name (None if NULL), how long it has
    been idle, exact and in whole seconds (None when state_change is NULL)."""

    state: str | None
    application: str | None
    seconds: float | None
    whole: float | None


@dataclass(frozen=True)
class IdleHistogram:
    """The idle sessions of one (state, application_name): cumulative counts at
    IDLE_BOUNDS, their count and the sum of their whole seconds."""

    buckets: tuple[int, ...]
    count: int
    total: float


@dataclass(frozen=True)
class PgActivityFacts:
    transactions: int
    oldest: float | None
    autovacuums: tuple[Autovacuum, ...]
    idle: tuple[IdleSession, ...]
    hidden: int = 0
    role: str = ""

    @property
    def unseen(self) -> str:
        return pg_cannot_see(f"{self.hidden} session(s) of pg_stat_activity",
                             self.role) if self.hidden else ""


def parse_activity(transactions: Iterable[Row], autovacuum: Iterable[Row],
                   idle: Iterable[Row]) -> PgActivityFacts:
    """The rows of activity_transactions, activity_autovacuum and activity_idle."""
    head = next(iter(transactions), {})
    return PgActivityFacts(
        int(number(head.get("transactions")) or 0), number(head.get("oldest_seconds")),
        tuple(Autovacuum(text(r.get("datname")), text(r.get("query")),
                         text(r.get("relname")), number(r.get("started_seconds")),
                         number(r.get("age_seconds"))) for r in autovacuum),
        tuple(IdleSession(None if r.get("state") is None else text(r.get("state")),
                          None if r.get("application_name") is None
                          else text(r.get("application_name")),
                          number(r.get("idle_seconds")), number(r.get("idle_whole_seconds")))
              for r in idle),
        int(number(head.get("hidden")) or 0), text(head.get("role")))


def idle_histograms(sessions: Iterable[IdleSession]
                    ) -> dict[tuple[str | None, str | None], IdleHistogram]:
    """The idle sessions by (state, application_name), as postgres_exporter's query groups
    them: a session counts in every bucket whose bound its exact idle time does not pass,
    the sum adds whole seconds, one whose state_change is NULL counts but adds to nothing."""
    groups: dict[tuple[str | None, str | None], list[IdleSession]] = {}
    for s in sessions:
        groups.setdefault((s.state, s.application), []).append(s)
    return {key: IdleHistogram(
        tuple(sum(1 for s in group if s.seconds is not None and s.seconds <= bound)
              for bound in IDLE_BOUNDS),
        len(group), float(sum(s.whole for s in group if s.whole is not None)))
        for key, group in groups.items()}


def histogram_samples(name: str, histogram: IdleHistogram, labels: Mapping[str, str],
                      bound: Mapping[float, str]) -> Iterator[Sample]:
    """A histogram's `_bucket` (bounds spelled by `bound`), `_sum` and `_count` samples."""
    for le, count in zip(IDLE_BOUNDS, histogram.buckets, strict=True):
        yield Sample(name + "_bucket", float(count), {**labels, "le": bound[le]})
    yield Sample(name + "_bucket", float(histogram.count), {**labels, "le": "+Inf"})
    yield Sample(name + "_sum", histogram.total, labels)
    yield Sample(name + "_count", float(histogram.count), labels)


def activity_samples(facts: PgActivityFacts) -> Iterator[Sample]:
    """dbgauge's families: the open transactions, each worker (the first of two on one
    table wins), the idle histograms."""
    yield Sample(OPEN.name, float(facts.transactions))
    if facts.oldest is not None:
        yield Sample(OLDEST.name, facts.oldest)
    seen: set[tuple[str, str, str]] = set()
    for worker in facts.autovacuums:
        table, operation = worker.table
        key = (worker.database, table, operation)
        if worker.age is None or key in seen:
            continue
        seen.add(key)
        yield Sample(AUTOVACUUM.name, worker.age,
                     {"database": worker.database, "table": table, "operation": operation})
    bound = {le: f"{le:g}" for le in IDLE_BOUNDS}
    for (state, application), histogram in idle_histograms(facts.idle).items():
        labels = {"state": state or "", "application_name": application or ""}
        yield from histogram_samples(IDLE.name, histogram, labels, bound)


class PostgresActivity(Collector[PgActivityFacts]):
    name = "postgres_activity"
    help = ("Open transactions (count, oldest age), autovacuum workers at work and idle "
            "sessions' idle time by state and application_name (pg_stat_activity); opt-in.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    default_enabled = False
    metrics = METRICS

    def read(self, conn: Connection) -> PgActivityFacts:
        return parse_activity(conn.query("activity_transactions"),
                              conn.query("activity_autovacuum"), conn.query("activity_idle"))

    def samples(self, facts: PgActivityFacts) -> Iterable[Sample]:
        yield from activity_samples(facts)
        if facts.hidden:
            raise Incomplete(facts.unseen)

    def incomplete(self, facts: PgActivityFacts) -> str | None:
        return facts.unseen or None
