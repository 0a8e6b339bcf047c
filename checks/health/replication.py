"""check replication: are replication threads running, without errors?

MySQL/MariaDB: every channel of SHOW REPLICA/SLAVE STATUS (the mysql_replication
collector's channels): a stopped SQL or I/O thread is CRITICAL with the server's last
error, an I/O thread still connecting or a recorded error on running threads is WARNING.
PostgreSQL standby: the WAL receiver must be streaming (else CRITICAL), paused replay and
a receiver silent longer than a working link ever is (wal_receiver_timeout/2 + 5 s: it is
stalled) are WARNING; primary: physical standbys not streaming or silent (no reply within
wal_sender_timeout/2 + 5 s), inactive or lost replication slots (the postgres_replication
collector's facts); a logical subscriber's walsender is not a standby (its subscriber
is checked on the subscriber). What the role cannot see is UNKNOWN, naming the grant. A server that
is not replicating at all is OK and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, NodeOutcome, nothing_to_check
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.collectors.mysql_replication import ReplicaStatus
    from dbgauge.collectors.postgres_replication import (
        LocalReplication,
        Slot,
        Standby,
        Subscription,
    )
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

METRIC = "channels_running"


def channel_findings(node: str, st: ReplicaStatus) -> list[Finding]:
    """Problems of one replication channel (pure: unit-tested on captured rows)."""
    where = f"channel '{st.channel}'" if st.channel else "replication"
    sql_error, io_error = st.last_sql_error, st.last_io_error
    out = []
    if not st.sql_running:
        why = f": error {st.last_sql_errno}: {sql_error}" if st.last_sql_errno else ""
        out.append(Finding(Status.CRITICAL, node, "sql-thread-stopped",
                           f"{where}: SQL thread stopped{why}"))
    if st.io_thread == "No":
        why = f": error {st.last_io_errno}: {io_error}" if st.last_io_errno else ""
        out.append(Finding(Status.CRITICAL, node, "io-thread-stopped",
                           f"{where}: I/O thread stopped{why}"))
    elif not st.io_running:
        why = f" (last error {st.last_io_errno}: {io_error})" if st.last_io_errno else ""
        out.append(Finding(Status.WARNING, node, "io-thread-connecting",
                           f"{where}: I/O thread is {st.io_thread}{why}"))
    elif st.sql_running and (st.last_io_errno or st.last_sql_errno):
        errno = st.last_sql_errno or st.last_io_errno
        out.append(Finding(Status.WARNING, node, "replication-error",
                           f"{where}: running, but the last error ({errno}) is still "
                           f"recorded: {sql_error or io_error}"))
    return out


def _mysql(node: Target, conn: Connection) -> NodeOutcome:
    from dbgauge.collectors.mysql_replication import read_channels

    channels = read_channels(conn)
    if not channels:
        return nothing_to_check(node, "not a replica (no replication channel)")
    findings = [f for st in channels for f in channel_findings(node.name, st)]
    running = sum(1 for st in channels if not channel_findings(node.name, st))
    perf = ((perf_label(node.name, METRIC), float(running)),
            (perf_label(node.name, "channels"), float(len(channels))))
    return NodeOutcome(node.name, tuple(findings), perf,
                       f"{running} of {len(channels)} channel(s) replicating")


def standby_findings(node: str, local: LocalReplication) -> list[Finding]:
    """Problems of a PostgreSQL standby."""
    from dbgauge.checks.nodes import INSUFFICIENT_PRIVILEGE  # not loaded to list the checks

    status = local.wal_receiver_status
    out = []
    if local.wal_receiver_hidden:
        out.append(Finding(Status.UNKNOWN, node, INSUFFICIENT_PRIVILEGE, local.hidden))
    elif status != "streaming":
        out.append(Finding(Status.CRITICAL, node, "wal-receiver-not-streaming",
                           f"WAL receiver is {status}, not streaming from its upstream"))
    elif local.receiver_silent:
        out.append(Finding(Status.WARNING, node, "wal-receiver-silent",
                           "WAL receiver is streaming but has heard nothing from its upstream "
                           f"for {local.wal_receiver_last_message_age_seconds or 0.0:.0f} s "
                           "(a working link hears from it every wal_receiver_timeout/2 = "
                           f"{(local.wal_receiver_timeout_seconds or 0.0) / 2:.0f} s)"))
    if local.replay_paused:
        out.append(Finding(Status.WARNING, node, "replay-paused",
                           "WAL replay is paused (pg_wal_replay_pause)"))
    return out


def primary_findings(node: str, standbys: Sequence[Standby],
                     slots: Sequence[Slot], hidden: str = "") -> list[Finding]:
    """Problems a PostgreSQL primary shows: standbys not streaming, slots lost or idle;
    walsenders the role cannot see (`hidden`, the line naming the grant) are UNKNOWN."""
    from dbgauge.checks.nodes import INSUFFICIENT_PRIVILEGE  # not loaded to list the checks

    out = [Finding(Status.UNKNOWN, node, INSUFFICIENT_PRIVILEGE, hidden)] if hidden else []
    for standby in standbys:
        if standby.state != "streaming":
            out.append(Finding(Status.WARNING, node, "standby-not-streaming",
                               f"standby {standby.application_name} is {standby.state}"))
        elif standby.silent:
            out.append(Finding(Status.WARNING, node, "standby-silent",
                               f"standby {standby.application_name} has not replied for "
                               f"{standby.reply_age_seconds or 0.0:.0f} s (a working one "
                               "answers within wal_sender_timeout/2 = "
                               f"{(standby.sender_timeout_seconds or 0.0) / 2:.0f} s)"))
    for slot in slots:
        name, retained = slot.slot_name, slot.retained_bytes
        if slot.wal_status == "lost":
            out.append(Finding(Status.CRITICAL, node, "slot-lost",
                               f"replication slot {name} lost WAL its consumer needs"))
        elif not slot.active:
            held = f" and retains {retained:.0f} bytes of WAL" if retained is not None else ""
            out.append(Finding(Status.WARNING, node, "slot-inactive",
                               f"replication slot {name} is inactive{held}"))
    return out


def subscription_findings(node: str, subscriptions: Sequence[Subscription]) -> list[Finding]:
    """Problems of a logical-replication subscriber: a subscription disabled or without
    its apply worker receives nothing (the publisher's slot keeps WAL meanwhile)."""
    out = []
    for sub in subscriptions:
        if not sub.enabled:
            out.append(Finding(Status.CRITICAL, node, "subscription-disabled",
                               f"subscription {sub.name} is disabled",
                               fix=f"ALTER SUBSCRIPTION {sub.name} ENABLE (on {node})"))
        elif not sub.worker_running:
            out.append(Finding(Status.CRITICAL, node, "subscription-not-running",
                               f"subscription {sub.name} is enabled but its apply worker "
                               "is not running (see the subscriber's log: an apply error "
                               "or an unreachable publisher)"))
    return out


def _subscriptions_note(subscriptions: Sequence[Subscription]) -> str:
    running = [s for s in subscriptions if s.enabled and s.worker_running]
    note = f"subscriber, {len(running)} of {len(subscriptions)} subscription(s) streaming"
    lags = [s for s in running if s.lag_seconds is not None]
    if lags:
        worst = max(lags, key=lambda s: s.lag_seconds or 0.0)
        note += (f" (lag {worst.lag_seconds:.1f} s, {worst.lag_bytes or 0.0:.0f} bytes in "
                 f"{worst.name})")
    return note


def _publisher_note(senders: Sequence[Standby]) -> str:
    """The logical walsenders (subscribers'), which are not standbys."""
    if not senders:
        return ""
    streaming = sum(1 for s in senders if s.state == "streaming")
    return f", {streaming} of {len(senders)} logical walsender(s) streaming to subscribers"


def _subscription_perf(node: str, subscriptions: Sequence[Subscription]
                       ) -> list[tuple[str, float]]:
    perf = []
    for sub in subscriptions:
        for metric, value in (("subscription_lag_seconds", sub.lag_seconds),
                              ("subscription_lag_bytes", sub.lag_bytes)):
            if value is not None:
                perf.append((perf_label(node, f"{sub.name}:{metric}"), value))
    return perf


def _postgres(node: Target, conn: Connection) -> NodeOutcome:
    from dbgauge.collectors.postgres_replication import read_replication

    facts = read_replication(conn)
    if facts.local.in_recovery:
        findings = standby_findings(node.name, facts.local)
        if facts.local.wal_receiver_hidden:
            return NodeOutcome(node.name, tuple(findings), note="standby, receiver unseen")
        perf = ((perf_label(node.name, METRIC), 0.0 if findings else 1.0),)
        return NodeOutcome(node.name, tuple(findings), perf, "standby, streaming")
    standbys, slots, subscriptions = facts.physical, facts.slots, facts.subscriptions
    hidden = facts.local.hidden
    if not standbys and not slots and not subscriptions and not hidden:
        return nothing_to_check(node, "not replicating (no standby, no slot, no subscription)")
    findings = primary_findings(node.name, standbys, slots, hidden)
    findings += subscription_findings(node.name, subscriptions)
    streaming = sum(1 for st in standbys if st.state == "streaming")
    shown = (standbys or slots) and not hidden  # a count of what it sees is not the count
    notes = [f"primary, {streaming} standby(s) streaming" + _publisher_note(facts.logical)
             ] if shown else []
    values = [(perf_label(node.name, METRIC), float(streaming))] if shown else []
    if subscriptions:
        notes.append(_subscriptions_note(subscriptions))
        values += _subscription_perf(node.name, subscriptions)
    return NodeOutcome(node.name, tuple(findings), tuple(values), "; ".join(notes))


def _read(node: Target, conn: Connection) -> NodeOutcome:
    return _mysql(node, conn) if node.kind == "mysql" else _postgres(node, conn)


CHECK = HealthCheck(
    name="replication", summary="Replication threads running and error-free.",
    measures="every problem has its own severity (see below)",
    kinds=frozenset({"mysql", "postgres"}), metric=METRIC, read=_read)
