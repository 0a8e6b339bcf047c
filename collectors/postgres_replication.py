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

`read` returns `PgReplicationFacts` (`check replication` judges them); `read_local` is
its first statement alone, which `check lag` needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.collectors._pg_slots import (
    SLOT_ACTIVE,
    SLOT_RETAINED,
    SLOT_SAFE,
    SLOT_WAL_STATUS,
    WAL_STATUSES,
    Slot,
    parse_slots,
    slot_samples,
)
from dbgauge.collectors._pg_subscriptions import (
    LOGICAL_SENDER_STATE,
    LOGICAL_SENDERS,
    SUB_ENABLED,
    SUB_LAG_BYTES,
    SUB_LAG_SECONDS,
    SUB_WORKER,
    SUBSCRIPTIONS,
    Subscription,
    logical_sender_samples,
    parse_subscriptions,
    subscription_samples,
)
from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.errors import Incomplete
from dbgauge.toolkit.metrics import (
    Collector,
    MetricSpec,
    MetricTable,
    Sample,
    present,
    state_set,
)

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
    "Physical standbys connected to this server (pg_stat_replication rows; base backups and "
    "logical walsenders excluded).")
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


def _lag_bytes(stage: str, verb: str) -> MetricSpec:
    return MetricSpec(
        f"{_P}standby_{stage}_lag_bytes", "gauge",
        f"WAL bytes this server has generated that the standby has not yet {verb} "
        f"(pg_wal_lsn_diff of the current position and {stage}_lsn).",
        ("application_name",))


def _lag_seconds(stage: str, verb: str) -> MetricSpec:
    return MetricSpec(
        f"{_P}standby_{stage}_lag_seconds", "gauge",
        f"PostgreSQL's own {stage}_lag for the standby: time from a local commit until the "
        f"standby reported it {verb}. PostgreSQL shows NULL once the standby has caught up "
        f"and gone idle: dbgauge reports 0 then (and nothing while NULL but not caught up).",
        ("application_name",))


REPLY_AGE = MetricSpec(
    _P + "standby_reply_age_seconds", "gauge",
    "Seconds since the standby last replied (pg_stat_replication reply_time). A working "
    "standby replies at least every wal_receiver_status_interval, idle or not: a stalled one "
    "shows here while its replay_lag stays at its last value.", ("application_name",))
SENT_LAG_BYTES = _lag_bytes("sent", "been sent")
WRITE_LAG_BYTES = _lag_bytes("write", "written")
FLUSH_LAG_BYTES = _lag_bytes("flush", "flushed")
REPLAY_LAG_BYTES = _lag_bytes("replay", "replayed")
WRITE_LAG_SECONDS = _lag_seconds("write", "written")
FLUSH_LAG_SECONDS = _lag_seconds("flush", "flushed")
REPLAY_LAG_SECONDS = _lag_seconds("replay", "replayed")

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
    "replayed commit (now - pg_last_xact_replay_timestamp); the WAL receiver's silence "
    "instead when it is longer (a stalled receiver) and beyond wal_receiver_timeout/2 + 5 s, "
    "which a healthy link never is. An idle primary does not make it grow. Absent when it "
    "cannot be known: no WAL receiver streaming, replay behind before any commit is "
    "replayed, or a role without pg_read_all_stats.")
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

METRICS = MetricTable(
    CONFIGURED, IN_RECOVERY, STANDBYS, SLOTS, STANDBY_STATE, STANDBY_SYNC,
    SENT_LAG_BYTES, WRITE_LAG_BYTES, FLUSH_LAG_BYTES, REPLAY_LAG_BYTES,
    WRITE_LAG_SECONDS, FLUSH_LAG_SECONDS, REPLAY_LAG_SECONDS, REPLY_AGE,
    SLOT_ACTIVE, SLOT_RETAINED, SLOT_SAFE, SLOT_WAL_STATUS,
    RECEIVE_REPLAY, LAST_REPLAY, LAG_SECONDS, REPLAY_PAUSED, RECEIVER_STATUS, RECEIVER_AGE,
    SUBSCRIPTIONS, SUB_ENABLED, SUB_WORKER, SUB_LAG_SECONDS, SUB_LAG_BYTES,
    LOGICAL_SENDERS, LOGICAL_SENDER_STATE,
)


@dataclass(frozen=True)
class LocalReplication:
    """The `replication_local` row: this server's role and counts, and on a standby its
    replay and WAL receiver (None where PostgreSQL reports NULL). `lag_seconds` is the
    standby's lag (see `standby_lag`), None when it cannot be known: `lag_unknown` says
    why. `standbys_hidden` walsenders and a `wal_receiver_hidden` receiver are there but
    show the role nothing (no pg_read_all_stats): `hidden` names what and the grant."""

    in_recovery: bool
    standbys: float  # physical ones
    slots: float
    subscriptions: float = 0.0
    logical_senders: float = 0.0  # walsenders of logical subscribers
    receive_replay_bytes: float | None = None
    last_replay_timestamp: float | None = None  # Unix seconds
    lag_seconds: float | None = None  # 0 when everything received is replayed
    wal_receiver_last_message_age_seconds: float | None = None
    replay_paused: bool = False
    wal_receiver_status: str = "stopped"  # stopped when no receiver runs
    last_replay_age_seconds: float = 0.0  # 0 on a primary and until a commit is replayed
    replay_lag_seconds: float | None = None  # by replay alone, as the statement computes it
    lag_unknown: str = ""  # why lag_seconds is None on a standby
    role: str = ""  # the role the statement ran as (current_user)
    standbys_hidden: float = 0.0
    wal_receiver_hidden: bool = False
    wal_receiver_timeout_seconds: float | None = None

    @property
    def receiver_silent(self) -> bool:
        """The streaming WAL receiver heard nothing from upstream for longer than a working
        link ever is silent (it asks for a keepalive after wal_receiver_timeout/2)."""
        return self.wal_receiver_status == "streaming" and silent(
            self.wal_receiver_last_message_age_seconds, self.wal_receiver_timeout_seconds, 2)

    @property
    def hidden(self) -> str:
        """What of this row the role cannot see, with the grant; "" when it sees it all."""
        what = []
        if self.standbys_hidden:
            what.append(f"the state of {self.standbys_hidden:.0f} walsender(s) "
                        "(pg_stat_replication)")
        if self.wal_receiver_hidden:
            what.append("the WAL receiver (pg_stat_wal_receiver)")
        return pg_cannot_see(" nor ".join(what), self.role) if what else ""


# A WAL receiver hears from its upstream at least every wal_receiver_timeout/2 (it asks for
# a keepalive then; an idle primary sends nothing before), a walsender from its standby every
# wal_sender_timeout/2 (it asks then). Silence beyond that with this allowance means nothing
# flows: the standby falls behind by the silence while its replay lag alone stays 0.
SILENCE_ALLOWANCE_SECONDS = 5.0


def silent(age: float | None, timeout: float | None, share: float = 1.0) -> bool:
    """`age` seconds of silence are longer than `timeout / share` allows (a timeout of 0
    or unknown: never)."""
    return age is not None and bool(timeout) and \
        age > (timeout or 0.0) / share + SILENCE_ALLOWANCE_SECONDS


def standby_lag(replay_lag: float | None, status: str, message_age: float | None,
                receiver_timeout: float | None) -> tuple[float | None, str]:
    """A standby's lag and, when None, why: the replay lag (0 when all received is
    replayed), or the receiver's silence when longer than a working link is ever silent.
    Without a streaming receiver the upstream's position is unknown: so is the lag."""
    if status != "streaming":
        return None, f"the WAL receiver is {status}: the upstream's position is unknown"
    if replay_lag is None:
        return None, ("replay is behind and no transaction has been replayed since the "
                      "standby started: no commit time to measure it by")
    if silent(message_age, receiver_timeout, 2):
        return max(replay_lag, message_age or 0.0), ""
    return replay_lag, ""


@dataclass(frozen=True)
class Standby:
    """One `replication_standbys` row: a connected standby seen from its primary."""

    application_name: str
    state: str  # "" when NULL
    sync_state: str  # "" when NULL
    sent_lag_bytes: float | None = None
    write_lag_bytes: float | None = None
    flush_lag_bytes: float | None = None
    replay_lag_bytes: float | None = None
    write_lag_seconds: float | None = None  # PostgreSQL's own, NULL once caught up and idle
    flush_lag_seconds: float | None = None
    replay_lag_seconds: float | None = None
    pid: str = ""
    client_addr: str = ""  # "" for a Unix socket
    current_lsn_bytes: float | None = None  # on a primary: pg_current_wal_lsn() - '0/0'
    replay_diff_bytes: float | None = None  # on a primary, unclamped; None if unknown
    reply_time: float | None = None  # Unix seconds
    reply_age_seconds: float | None = None  # since the standby last replied
    status_interval_seconds: float | None = None  # this server's wal_receiver_status_interval
    sender_timeout_seconds: float | None = None  # this server's wal_sender_timeout
    logical: bool = False  # a logical walsender (a subscriber's), not a standby

    @property
    def silent(self) -> bool:
        """No reply for longer than a working standby ever takes: the walsender asked for
        one after wal_sender_timeout/2."""
        return silent(self.reply_age_seconds, self.sender_timeout_seconds, 2)

    @property
    def lag_seconds(self) -> float:
        """The standby's lag seen from this server: 0 when it has replayed all there is;
        else PostgreSQL's replay_lag (measured when the standby last replied), or how long
        it has been silent when that is longer than a standby ever is while it works (it
        replies every wal_receiver_status_interval, idle or not): a stalled standby
        replies nothing, so replay_lag alone would stay at its last value."""
        if self.replay_lag_bytes == 0:
            return 0.0
        lag = self.replay_lag_seconds or 0.0
        if silent(self.reply_age_seconds, self.status_interval_seconds):
            return max(lag, self.reply_age_seconds or 0.0)
        return lag


@dataclass(frozen=True)
class PgReplicationFacts:
    """The facts: the local row, then every walsender and slot (read only when the local
    row counts some, else empty). `standbys` are the walsenders as PostgreSQL lists them
    (pg_stat_replication: two with one application_name are two entries, logical ones
    included); `physical` are the standbys, `logical` the subscribers' walsenders."""

    local: LocalReplication
    standbys: tuple[Standby, ...] = ()
    slots: tuple[Slot, ...] = ()
    subscriptions: tuple[Subscription, ...] = ()

    @property
    def physical(self) -> tuple[Standby, ...]:
        return tuple(s for s in self.standbys if not s.logical)

    @property
    def logical(self) -> tuple[Standby, ...]:
        return tuple(s for s in self.standbys if s.logical)


def parse_local(row: Row) -> LocalReplication:
    """The one row of `replication_local` -> LocalReplication."""
    in_recovery = is_on(row.get("in_recovery"))
    status = str(row.get("wal_receiver_status") or "stopped")
    age = number(row.get("wal_receiver_last_message_age_seconds"))
    replay_lag = number(row.get("lag_seconds"))
    hidden = is_on(row.get("wal_receiver_hidden"))
    role = text(row.get("role"))
    timeout = number(row.get("wal_receiver_timeout_seconds"))
    lag, unknown = None, ""
    if not in_recovery:
        pass
    elif row.get("receive_replay_bytes") is None:
        unknown = "no WAL receiver position (archive recovery?)"
    elif hidden:
        unknown = pg_cannot_see("the WAL receiver (pg_stat_wal_receiver)", role)
    else:
        lag, unknown = standby_lag(replay_lag, status, age, timeout)
    return LocalReplication(
        in_recovery=in_recovery, standbys=number(row.get("standbys")) or 0.0,
        slots=number(row.get("slots")) or 0.0,
        subscriptions=number(row.get("subscriptions")) or 0.0,
        logical_senders=number(row.get("logical_senders")) or 0.0,
        receive_replay_bytes=number(row.get("receive_replay_bytes")),
        last_replay_timestamp=number(row.get("last_replay_timestamp")),
        lag_seconds=lag, wal_receiver_last_message_age_seconds=age,
        replay_paused=is_on(row.get("replay_paused")),
        wal_receiver_status=status,
        last_replay_age_seconds=number(row.get("last_replay_age_seconds")) or 0.0,
        replay_lag_seconds=replay_lag, lag_unknown=unknown, role=role,
        standbys_hidden=number(row.get("standbys_hidden")) or 0.0,
        wal_receiver_hidden=hidden, wal_receiver_timeout_seconds=timeout)


def parse_standbys(rows: Iterable[Row]) -> tuple[Standby, ...]:
    """`replication_standbys` rows -> Standby, in row order (lowest pid first)."""
    return tuple(Standby(
        str(row["application_name"]), str(row.get("state") or ""),
        str(row.get("sync_state") or ""),
        sent_lag_bytes=number(row.get("sent_lag_bytes")),
        write_lag_bytes=number(row.get("write_lag_bytes")),
        flush_lag_bytes=number(row.get("flush_lag_bytes")),
        replay_lag_bytes=number(row.get("replay_lag_bytes")),
        write_lag_seconds=number(row.get("write_lag_seconds")),
        flush_lag_seconds=number(row.get("flush_lag_seconds")),
        replay_lag_seconds=number(row.get("replay_lag_seconds")),
        pid=text(row.get("pid")), client_addr=text(row.get("client_addr")),
        current_lsn_bytes=number(row.get("current_lsn_bytes")),
        replay_diff_bytes=number(row.get("replay_diff_bytes")),
        reply_time=number(row.get("reply_time")),
        reply_age_seconds=number(row.get("reply_age_seconds")),
        status_interval_seconds=number(row.get("status_interval_seconds")),
        sender_timeout_seconds=number(row.get("sender_timeout_seconds")),
        logical=is_on(row.get("logical")),
    ) for row in rows)


def read_local(conn: Connection) -> LocalReplication:
    """The local row alone: one statement."""
    return parse_local(conn.query("replication_local")[0])


def read_replication(conn: Connection, local: LocalReplication | None = None
                     ) -> PgReplicationFacts:
    """The local row (unless already read), then the standbys, slots and subscriptions it
    counts (none: not read)."""
    local = read_local(conn) if local is None else local
    standbys = parse_standbys(conn.query("replication_standbys")) \
        if local.standbys or local.logical_senders else ()
    slots = parse_slots(conn.query("replication_slots")) if local.slots else ()
    subscriptions = parse_subscriptions(conn.query("replication_subscriptions")) \
        if local.subscriptions else ()
    return PgReplicationFacts(local, standbys, slots, subscriptions)


def local_samples(local: LocalReplication) -> Iterator[Sample]:
    """Role, counts and the standby-side values; what the role cannot see is left out
    (the collector then fails, naming the grant)."""
    in_recovery = 1.0 if local.in_recovery else 0.0
    known = in_recovery or local.standbys or local.slots or local.subscriptions
    if known or not local.standbys_hidden:
        yield Sample(CONFIGURED.name, 1.0 if known else 0.0)
    yield Sample(IN_RECOVERY.name, in_recovery)
    if not local.standbys_hidden:
        yield Sample(STANDBYS.name, local.standbys)
    yield Sample(SLOTS.name, local.slots)
    yield Sample(SUBSCRIPTIONS.name, local.subscriptions)
    yield Sample(LOGICAL_SENDERS.name, local.logical_senders)
    if not local.in_recovery:
        return
    yield from present(((RECEIVE_REPLAY, local.receive_replay_bytes),
                        (LAST_REPLAY, local.last_replay_timestamp),
                        (LAG_SECONDS, local.lag_seconds),
                        (RECEIVER_AGE, local.wal_receiver_last_message_age_seconds)))
    yield Sample(REPLAY_PAUSED.name, 1.0 if local.replay_paused else 0.0)
    if not local.wal_receiver_hidden:
        yield from state_set(RECEIVER_STATUS, "status", RECEIVER_STATES,
                             local.wal_receiver_status)


def _lag_time(seconds: float | None, lag_bytes: float | None) -> float | None:
    """PostgreSQL's lag time, 0 when it is NULL because the standby caught up and went
    idle (PostgreSQL clears the measurement then)."""
    return 0.0 if seconds is None and lag_bytes == 0 else seconds


def standby_samples(standbys: Iterable[Standby]) -> Iterator[Sample]:
    """Per-standby series (physical standbys: logical walsenders have their own).

    Two walsenders with the same application_name (a standby reconnecting while its old
    connection lingers) would make duplicate series: the first (lowest pid) wins.
    """
    seen: set[str] = set()
    for standby in standbys:
        name = standby.application_name
        if name in seen:
            continue
        seen.add(name)
        labels = {"application_name": name}
        yield from state_set(STANDBY_STATE, "state", STANDBY_STATES, standby.state, labels)
        yield Sample(STANDBY_SYNC.name,
                     1.0 if standby.sync_state in ("sync", "quorum") else 0.0, labels)
        yield from present(((SENT_LAG_BYTES, standby.sent_lag_bytes),
                            (WRITE_LAG_BYTES, standby.write_lag_bytes),
                            (FLUSH_LAG_BYTES, standby.flush_lag_bytes),
                            (REPLAY_LAG_BYTES, standby.replay_lag_bytes)), labels)
        yield from present(
            ((WRITE_LAG_SECONDS, _lag_time(standby.write_lag_seconds, standby.write_lag_bytes)),
             (FLUSH_LAG_SECONDS, _lag_time(standby.flush_lag_seconds, standby.flush_lag_bytes)),
             (REPLAY_LAG_SECONDS, _lag_time(standby.replay_lag_seconds,
                                            standby.replay_lag_bytes)),
             (REPLY_AGE, standby.reply_age_seconds)), labels)


__all__ = ["WAL_STATUSES", "Slot", "Subscription", "parse_slots",  # re-exported
           "parse_subscriptions", "subscription_samples"]
class PostgresReplication(Collector[PgReplicationFacts]):
    name = "postgres_replication"
    help = ("Streaming replication: per-standby state and lag (bytes and seconds), slots and "
            "retained WAL on a primary; receive-vs-replay lag, replay timestamp, lag seconds "
            "(0 when caught up) and WAL receiver status on a standby; state and lag of "
            "logical-replication subscriptions on a subscriber.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS

    def read(self, conn: Connection) -> PgReplicationFacts:
        return read_replication(conn)

    def samples(self, facts: PgReplicationFacts) -> Iterable[Sample]:
        yield from local_samples(facts.local)
        yield from standby_samples(facts.physical)
        yield from logical_sender_samples((s.application_name, s.state) for s in facts.logical)
        yield from slot_samples(facts.slots)
        yield from subscription_samples(facts.subscriptions)
        if (why := self.incomplete(facts)) is not None:  # what it could see stands
            raise Incomplete(why)

    def incomplete(self, facts: PgReplicationFacts) -> str | None:
        return facts.local.hidden or None
