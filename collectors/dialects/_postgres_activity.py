"""postgres_exporter's opt-in session and buffer collectors, from dbgauge's postgres_activity
and postgres_buffercache facts.

Upstream's long_running_transactions, stat_activity_autovacuum and process_idle
(collector/pg_long_running_transactions.go, pg_stat_activity_autovacuum.go,
pg_process_idle.go) and buffercache_summary (pg_buffercache_summary.go), all off by
default there as their dbgauge collectors are here; Debian's 0.11 has none of them. The
peer's names, labels, types and values: the oldest transaction's age is 0 when there is
none; an autovacuum worker is labelled with SPLIT_PART(query, '.', 2) and valued with its
xact_start in Unix seconds; the idle histogram's NULL state or application_name is
"unknown"; a buffer count that is NULL is 0, and nothing is made before PostgreSQL 16.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors._values import go_float
from dbgauge.collectors.postgres_activity import (
    IDLE_BOUNDS,
    PgActivityFacts,
    histogram_samples,
    idle_histograms,
)
from dbgauge.collectors.postgres_buffercache import PgBuffercacheFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import Sample

LONG = PeerSpec("pg_long_running_transactions", "gauge",
                "Current number of long running transactions")
OLDEST = PeerSpec("pg_long_running_transactions_oldest_timestamp_seconds", "gauge",
                  "The current maximum transaction age in seconds")
AUTOVACUUM = PeerSpec("pg_stat_activity_autovacuum_timestamp_seconds", "gauge",
                      "Start timestamp of the vacuum process in seconds", ("relname",))
IDLE = PeerSpec("pg_process_idle_seconds", "histogram", "Idle time of server processes",
                ("state", "application_name"))
_B = "pg_buffercache_summary_"
BUFFERS = {
    "used": PeerSpec(_B + "buffers_used", "gauge", "Number of used shared buffers"),
    "unused": PeerSpec(_B + "buffers_unused", "gauge", "Number of unused shared buffers"),
    "dirty": PeerSpec(_B + "buffers_dirty", "gauge", "Number of dirty shared buffers"),
    "pinned": PeerSpec(_B + "buffers_pinned", "gauge", "Number of pinned shared buffers"),
    "usagecount_avg": PeerSpec(_B + "usagecount_avg", "gauge",
                               "Average usage count of used shared buffers"),
}
_OURS_B = "dbgauge_postgres_shared_buffers_"

FAMILIES = PeerFamilies(
    PeerFamily(LONG, "dbgauge_postgres_open_transactions"),
    PeerFamily(OLDEST, "dbgauge_postgres_open_transactions_oldest_seconds",
               "0 when there is none, as the peer; dbgauge's is absent then"),
    PeerFamily(AUTOVACUUM, "dbgauge_postgres_autovacuum_worker_seconds",
               "the transaction's start in Unix seconds, as the peer; dbgauge's is its age, "
               "by database, schema-qualified table and operation; of two workers on one "
               "relname the first (by pid) is kept, where the peer's scrape fails"),
    PeerFamily(IDLE, "dbgauge_postgres_idle_session_seconds",
               "one histogram per state and application_name; the peer's query reads only "
               "its first row (one histogram) and fails when no session is idle"),
    *(PeerFamily(spec, _OURS_B + ("usage_count_average" if key == "usagecount_avg" else key),
                 "PostgreSQL 16+ only, as the peer; dbgauge's are there from 13"
                 if key == "used" else "")
      for key, spec in BUFFERS.items()),
)


def activity(facts: PgActivityFacts) -> Iterator[Sample]:
    """The three collectors' samples (the first of two workers with one relname wins)."""
    yield FAMILIES.sample(LONG.name, float(facts.transactions))
    yield FAMILIES.sample(OLDEST.name, facts.oldest or 0.0)
    seen: set[str] = set()
    for worker in facts.autovacuums:
        if worker.started is None or worker.relname in seen:
            continue  # the peer's Scan fails on a NULL xact_start
        seen.add(worker.relname)
        yield FAMILIES.sample(AUTOVACUUM.name, worker.started, {"relname": worker.relname})
    bound = {le: go_float(le) for le in IDLE_BOUNDS}
    for (state, application), histogram in idle_histograms(facts.idle).items():
        labels = {"state": "unknown" if state is None else state,
                  "application_name": "unknown" if application is None else application}
        for sample in histogram_samples(IDLE.name, histogram, labels, bound):
            yield FAMILIES.sample(sample.name, sample.value, sample.labels)


def buffercache(facts: PgBuffercacheFacts) -> Iterator[Sample]:
    """pg_buffercache_summary()'s five gauges, NULL as 0; none from the view (before 16)."""
    if not facts.summary:
        return
    for key, value in (("usagecount_avg", facts.usagecount_avg), ("used", facts.used),
                       ("unused", facts.unused), ("dirty", facts.dirty),
                       ("pinned", facts.pinned)):
        yield FAMILIES.sample(BUFFERS[key].name, value or 0.0)


TRANSLATE: dict[str, Translate] = {"postgres_activity": activity,
                                   "postgres_buffercache": buffercache}
# Opt-in in dbgauge as in the peer: not added to a target's defaults by the dialect.
OPT_IN = frozenset(TRANSLATE)
