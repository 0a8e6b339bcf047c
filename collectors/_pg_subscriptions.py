"""Logical replication, for postgres_replication: on a subscriber each subscription of the
connected database, whether its apply worker runs, and its lag; on a publisher the
walsenders that stream to logical subscribers, told apart from physical standbys."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Row
from dbgauge.toolkit.db.values import is_on, number
from dbgauge.toolkit.metrics import MetricSpec, Sample, present, state_set

_P = "dbgauge_postgres_replication_"

SUBSCRIPTIONS = MetricSpec(
    _P + "subscriptions", "gauge",
    "Logical-replication subscriptions of the connected database (this server subscribes).")
SUB_ENABLED = MetricSpec(
    _P + "subscription_enabled", "gauge",
    "1 if the subscription is enabled (ALTER SUBSCRIPTION ... ENABLE), else 0.",
    ("subscription",))
SUB_WORKER = MetricSpec(
    _P + "subscription_worker_running", "gauge",
    "1 if the subscription's apply worker runs, else 0 (disabled, or failing to start: see "
    "the subscriber's log).", ("subscription",))
SUB_LAG_SECONDS = MetricSpec(
    _P + "subscription_lag_seconds", "gauge",
    "Seconds since the subscription was last known caught up with its publisher (the "
    "walsender's last reported WAL end, pg_stat_subscription latest_end_time); 0 when "
    "nothing arrived since, so an idle publisher shows none. Absent while the apply worker "
    "does not run.", ("subscription",))
SUB_LAG_BYTES = MetricSpec(
    _P + "subscription_lag_bytes", "gauge",
    "WAL the subscription received since it was last known caught up (received_lsn - "
    "latest_end_lsn): a lower bound of its backlog, which the publisher's slot shows in "
    "full. Absent while the apply worker does not run.", ("subscription",))

LOGICAL_SENDERS = MetricSpec(
    _P + "logical_walsenders", "gauge",
    "Walsenders streaming from a logical slot (a subscriber's, pg_recvlogical's) on this "
    "server; they are not standbys and are not counted in "
    "dbgauge_postgres_replication_standbys.")
SENDER_STATES = ("startup", "catchup", "streaming", "stopping")
LOGICAL_SENDER_STATE = MetricSpec(
    _P + "logical_walsender_state", "gauge",
    "1 for the logical walsender's current state (startup, catchup, streaming, stopping), 0 "
    "for the others; application_name is the subscription's name for a subscriber.",
    ("application_name", "state"))


@dataclass(frozen=True)
class Subscription:
    """One logical-replication subscription of the connected database (the subscriber's
    side); lag values None while its apply worker does not run."""

    name: str
    enabled: bool
    worker_running: bool
    lag_bytes: float | None = None
    lag_seconds: float | None = None


def parse_subscriptions(rows: Iterable[Row]) -> tuple[Subscription, ...]:
    """`replication_subscriptions` rows -> Subscription."""
    return tuple(Subscription(str(row["subname"]), is_on(row.get("enabled")),
                              is_on(row.get("worker_running")), number(row.get("lag_bytes")),
                              number(row.get("lag_seconds"))) for row in rows)


def subscription_samples(subscriptions: Iterable[Subscription]) -> Iterator[Sample]:
    """Per-subscription series."""
    for sub in subscriptions:
        labels = {"subscription": sub.name}
        yield Sample(SUB_ENABLED.name, 1.0 if sub.enabled else 0.0, labels)
        yield Sample(SUB_WORKER.name, 1.0 if sub.worker_running else 0.0, labels)
        yield from present(((SUB_LAG_SECONDS, sub.lag_seconds), (SUB_LAG_BYTES, sub.lag_bytes)),
                           labels)


def logical_sender_samples(senders: Iterable[tuple[str, str]]) -> Iterator[Sample]:
    """(application_name, state) of each logical walsender -> its state set; the first of
    two with one name wins, as for standbys."""
    seen: set[str] = set()
    for name, state in senders:
        if name not in seen:
            seen.add(name)
            yield from state_set(LOGICAL_SENDER_STATE, "state", SENDER_STATES, state,
                                 {"application_name": name})
