"""postgres_replication: streaming replication seen from both ends (PostgreSQL 13+).

On a primary: every connected standby (by application_name) with its state, its lag in
bytes at each stage (sent, written, flushed, replayed) and the lag times PostgreSQL
measures itself (write_lag, flush_lag, replay_lag); every replication slot with the WAL it
retains and its wal_status. On a standby: whether it is in recovery, how far replay is
behind what was received, the last replayed commit's timestamp, a lag in seconds and the
WAL receiver's status.

The standby's lag in seconds is 0 whenever everything received has been replayed. Only
while replay is behind is it `now() - pg_last_xact_replay_timestamp()`. So an idle
primary (no commits to replay) does not look like a standby falling further behind every
second, which is postgres_exporter's `pg_replication_lag` bug (#385, #907).

Series that come and go (per standby, per slot) have companions that are always there:
`dbgauge_postgres_replication_configured`, `..._standbys` and `..._slots`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

_P = "dbgauge_postgres_replication_"

CONFIGURED = MetricSpec(
    _P + "configured", "gauge",
    "1 if this server takes part in replication: it is a standby (in recovery), or it has a "
    "connected standby or a replication slot; else 0. Per-standby and per-slot series "
    "exist only while there is something to report.")
IN_RECOVERY = MetricSpec(
    _P + "in_recovery", "gauge", "1 if the server is in recovery (a standby), else 0.")
STANDBYS = MetricSpec(
    _P + "standbys", "gauge",
    "Standbys connected to this server (pg_stat_replication rows, base backups excluded).")
SLOTS = MetricSpec(_P + "slots", "gauge", "Replication slots on this server.")

STANDBY_STATES = ("startup", "catchup", "streaming", "stopping")
STANDBY_STATE = MetricSpec(
    _P + "standby_state", "gauge",
    "1 for the standby's current walsender state (startup, catchup, streaming, stopping), "
    "0 for the others.", ("application_name", "state"))
STANDBY_SYNC = MetricSpec(
    _P + "standby_synchronous", "gauge",
    "1 if the standby is a synchronous standby (sync_state sync or quorum), else 0.",
    ("application_name",))
_LAG_BYTES = {
    stage: MetricSpec(
        f"{_P}standby_{stage}_lag_bytes", "gauge",
        f"WAL bytes this server has generated that the standby has not yet {verb} "
        f"(pg_wal_lsn_diff of the current position and {stage}_lsn).",
        ("application_name",))
    for stage, verb in (("sent", "been sent"), ("write", "written"), ("flush", "flushed"),
                        ("replay", "replayed"))
}
_LAG_SECONDS = {
    stage: MetricSpec(
        f"{_P}standby_{stage}_lag_seconds", "gauge",
        f"PostgreSQL's own {stage}_lag for the standby: time from a local commit until the "
        f"standby reported it {verb}. PostgreSQL shows NULL once the standby has caught up "
        f"and gone idle: dbgauge reports 0 then (and nothing while NULL but not caught up).",
        ("application_name",))
    for stage, verb in (("write", "written"), ("flush", "flushed"), ("replay", "replayed"))
}

SLOT_ACTIVE = MetricSpec(
    _P + "slot_active", "gauge", "1 if a process is streaming from the replication slot now.",
    ("slot_name", "slot_type"))
SLOT_RETAINED = MetricSpec(
    _P + "slot_retained_wal_bytes", "gauge",
    "WAL bytes the replication slot keeps on this server (from its restart_lsn to the "
    "current position); absent for a slot that never reserved WAL.",
    ("slot_name", "slot_type"))
SLOT_SAFE = MetricSpec(
    _P + "slot_safe_wal_size_bytes", "gauge",
    "WAL bytes that can still be written before the slot is in danger of being lost "
    "(safe_wal_size); absent when max_slot_wal_keep_size is -1 (no limit).",
    ("slot_name", "slot_type"))
WAL_STATUSES = ("reserved", "extended", "unreserved", "lost")
SLOT_WAL_STATUS = MetricSpec(
    _P + "slot_wal_status", "gauge",
    "1 for the slot's current wal_status (reserved, extended, unreserved, lost), 0 for the "
    "others.", ("slot_name", "slot_type", "wal_status"))

RECEIVE_REPLAY = MetricSpec(
    _P + "receive_replay_lag_bytes", "gauge",
    "On a standby: WAL bytes received but not yet replayed (pg_last_wal_receive_lsn minus "
    "pg_last_wal_replay_lsn); absent without a WAL receiver position (archive recovery).")
LAST_REPLAY = MetricSpec(
    _P + "last_replay_timestamp_seconds", "gauge",
    "On a standby: commit time of the last replayed transaction "
    "(pg_last_xact_replay_timestamp), Unix seconds; absent until one is replayed.")
LAG_SECONDS = MetricSpec(
    _P + "lag_seconds", "gauge",
    "On a standby: 0 when everything received has been replayed, else the age of the last "
    "replayed commit (now - pg_last_xact_replay_timestamp). An idle primary does not make "
    "it grow. Absent without a WAL receiver position (archive recovery).")
REPLAY_PAUSED = MetricSpec(
    _P + "replay_paused", "gauge",
    "On a standby: 1 if WAL replay is paused (pg_wal_replay_pause), else 0.")
RECEIVER_STATES = ("stopped", "starting", "streaming", "waiting", "restarting", "stopping")
RECEIVER_STATUS = MetricSpec(
    _P + "wal_receiver_status", "gauge",
    "On a standby: 1 for the WAL receiver's current status (pg_stat_wal_receiver; stopped "
    "when no receiver runs), 0 for the others.", ("status",))
RECEIVER_AGE = MetricSpec(
    _P + "wal_receiver_last_message_age_seconds", "gauge",
    "On a standby: seconds since the WAL receiver last heard from its upstream (keepalives "
    "included); absent when no receiver runs.")

METRICS: tuple[MetricSpec, ...] = (
    CONFIGURED, IN_RECOVERY, STANDBYS, SLOTS, STANDBY_STATE, STANDBY_SYNC,
    *_LAG_BYTES.values(), *_LAG_SECONDS.values(),
    SLOT_ACTIVE, SLOT_RETAINED, SLOT_SAFE, SLOT_WAL_STATUS,
    RECEIVE_REPLAY, LAST_REPLAY, LAG_SECONDS, REPLAY_PAUSED, RECEIVER_STATUS, RECEIVER_AGE,
)

Row = Mapping[str, Any]


def _flag(value: object) -> float:
    return 1.0 if value is True or value in ("t", "true", "on", 1) else 0.0


def local_samples(row: Row) -> Iterator[Sample]:
    """The one row of `replication_local` -> role, counts and the standby-side values."""
    in_recovery = _flag(row.get("in_recovery"))
    standbys = number(row.get("standbys")) or 0.0
    slots = number(row.get("slots")) or 0.0
    yield Sample(CONFIGURED.name, 1.0 if in_recovery or standbys or slots else 0.0)
    yield Sample(IN_RECOVERY.name, in_recovery)
    yield Sample(STANDBYS.name, standbys)
    yield Sample(SLOTS.name, slots)
    if not in_recovery:
        return
    for spec, column in ((RECEIVE_REPLAY, "receive_replay_bytes"),
                         (LAST_REPLAY, "last_replay_timestamp"), (LAG_SECONDS, "lag_seconds"),
                         (RECEIVER_AGE, "wal_receiver_last_message_age_seconds")):
        value = number(row.get(column))
        if value is not None:
            yield Sample(spec.name, value)
    yield Sample(REPLAY_PAUSED.name, _flag(row.get("replay_paused")))
    status = str(row.get("wal_receiver_status") or "stopped")
    for state in RECEIVER_STATES:
        yield Sample(RECEIVER_STATUS.name, 1.0 if state == status else 0.0, {"status": state})


def standby_samples(rows: Iterable[Row]) -> Iterator[Sample]:
    """`replication_standbys` rows -> per-standby series.

    Two walsenders with the same application_name (a standby reconnecting while its old
    connection lingers) would make duplicate series: the first row (lowest pid) wins.
    """
    seen: set[str] = set()
    for row in rows:
        name = str(row["application_name"])
        if name in seen:
            continue
        seen.add(name)
        labels = {"application_name": name}
        state = str(row.get("state") or "")
        for known in STANDBY_STATES:
            yield Sample(STANDBY_STATE.name, 1.0 if known == state else 0.0,
                         {**labels, "state": known})
        sync = str(row.get("sync_state") or "")
        yield Sample(STANDBY_SYNC.name, 1.0 if sync in ("sync", "quorum") else 0.0, labels)
        lag_bytes: dict[str, float | None] = {}
        for stage, spec in _LAG_BYTES.items():
            lag_bytes[stage] = value = number(row.get(f"{stage}_lag_bytes"))
            if value is not None:
                yield Sample(spec.name, value, labels)
        for stage, spec in _LAG_SECONDS.items():
            value = number(row.get(f"{stage}_lag_seconds"))
            if value is None and lag_bytes.get(stage) == 0:
                value = 0.0  # caught up and idle: PostgreSQL clears the measurement
            if value is not None:
                yield Sample(spec.name, value, labels)


def slot_samples(rows: Iterable[Row]) -> Iterator[Sample]:
    """`replication_slots` rows -> per-slot series."""
    for row in rows:
        labels = {"slot_name": str(row["slot_name"]), "slot_type": str(row.get("slot_type"))}
        yield Sample(SLOT_ACTIVE.name, _flag(row.get("active")), labels)
        retained = number(row.get("retained_bytes"))
        if retained is not None:
            yield Sample(SLOT_RETAINED.name, retained, labels)
        safe = number(row.get("safe_wal_size"))
        if safe is not None:
            yield Sample(SLOT_SAFE.name, safe, labels)
        status = str(row.get("wal_status") or "")
        for known in WAL_STATUSES:
            yield Sample(SLOT_WAL_STATUS.name, 1.0 if known == status else 0.0,
                         {**labels, "wal_status": known})


class PostgresReplication(Collector):
    name = "postgres_replication"
    help = ("Streaming replication: per-standby state and lag (bytes and seconds), slots and "
            "retained WAL on a primary; receive-vs-replay lag, replay timestamp, lag seconds "
            "(0 when caught up) and WAL receiver status on a standby.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS

    def collect(self, conn: Connection) -> Iterable[Sample]:
        local = conn.query("replication_local")[0]
        yield from local_samples(local)
        if number(local.get("standbys")):
            yield from standby_samples(conn.query("replication_standbys"))
        if number(local.get("slots")):
            yield from slot_samples(conn.query("replication_slots"))
