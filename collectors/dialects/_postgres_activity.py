"""postgres_exporter's opt-in session, buffer cache and WAL receiver collectors, from
dbgauge's postgres_activity, postgres_buffercache and postgres_wal_receiver facts.

Upstream's long_running_transactions, stat_activity_autovacuum and process_idle
(collector/pg_long_running_transactions.go, pg_stat_activity_autovacuum.go,
pg_process_idle.go), buffercache_summary (pg_buffercache_summary.go) and
stat_wal_receiver (pg_stat_walreceiver.go), all off by default there as their dbgauge
collectors are here; Debian's 0.11 has none of them. The peer's names, labels, types and
values: the oldest transaction's age is 0 when there is none; an autovacuum worker is
labelled with SPLIT_PART(query, '.', 2) and valued with its xact_start in Unix seconds; the
idle histogram's NULL state or application_name is "unknown"; a buffer count that is NULL
is 0, and nothing is made before PostgreSQL 16; the WAL receiver's row is left out when a
label or value is NULL (upstream_node alone may be).
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
from dbgauge.collectors.postgres_wal_receiver import PgWalReceiverFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import MetricType, Sample

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
_W, _OURS_W = "pg_stat_wal_receiver_", "dbgauge_postgres_wal_receiver_"
_WL = ("upstream_host", "slot_name", "status")
_SENT = "Send time of last message received from origin WAL sender"
# column -> (peer suffix, type, help as upstream words it, our family's suffix)
RECEIVER: dict[str, tuple[str, MetricType, str, str]] = {
    "receive_start_lsn": ("receive_start_lsn", "counter", "First write-ahead log location "
                          "used when WAL receiver is started represented as a decimal",
                          "start_lsn_bytes"),
    "flushed_lsn": ("flushed_lsn", "counter", "Last write-ahead log location already "
                    "received and flushed to disk, the initial value of this field being the "
                    "first log location used when WAL receiver is started represented as a "
                    "decimal", "flushed_lsn_bytes"),
    "receive_start_tli": ("receive_start_tli", "gauge", "First timeline number used when WAL "
                          "receiver is started", "start_timeline"),
    "received_tli": ("received_tli", "gauge", "Timeline number of last write-ahead log "
                     "location received and flushed to disk", "timeline"),
    "last_msg_send_time": ("last_msg_send_time", "counter", _SENT,
                           "last_message_sent_timestamp_seconds"),
    "last_msg_receipt_time": ("last_msg_receipt_time", "counter", _SENT,
                              "last_message_received_timestamp_seconds"),
    "latest_end_lsn": ("latest_end_lsn", "counter", "Last write-ahead log location reported "
                       "to origin WAL sender as integer", "reported_lsn_bytes"),
    "latest_end_time": ("latest_end_time", "counter", "Time of last write-ahead log location "
                        "reported to origin WAL sender", "reported_timestamp_seconds"),
}
UPSTREAM_NODE = PeerSpec(_W + "upstream_node", "gauge", "Node ID of the upstream node", _WL)

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
    *(PeerFamily(PeerSpec(_W + name, type_, help_, _WL), _OURS_W + ours,
                 "dbgauge's are labelled by upstream host and slot; the receiver's status is "
                 "postgres_replication's dbgauge_postgres_replication_wal_receiver_status"
                 if name == "receive_start_lsn" else "")
      for name, type_, help_, ours in RECEIVER.values()),
    PeerFamily(UPSTREAM_NODE, "", "repmgr's node id, from a repmgr_slot_N slot name"),
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


def wal_receiver(facts: PgWalReceiverFacts) -> Iterator[Sample]:
    """The receiver's row, unless a label or a value the peer needs is NULL."""
    r = facts.receiver
    if r is None or r.upstream_host is None or r.slot_name is None or r.status is None:
        return
    if any(c not in r.values for c in RECEIVER):
        return
    labels = {"upstream_host": r.upstream_host, "slot_name": r.slot_name, "status": r.status}
    for column in RECEIVER:
        yield FAMILIES.sample(_W + RECEIVER[column][0], r.values[column], labels)
    if r.upstream_node is not None:
        yield FAMILIES.sample(UPSTREAM_NODE.name, r.upstream_node, labels)


TRANSLATE: dict[str, Translate] = {"postgres_activity": activity,
                                   "postgres_buffercache": buffercache,
                                   "postgres_wal_receiver": wal_receiver}
