"""The subscriber's side of logical replication, for postgres_replication: each
subscription of the connected database, whether its apply worker runs, and its lag."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Row
from dbgauge.toolkit.db.values import is_on, number
from dbgauge.toolkit.metrics import MetricSpec, Sample, present

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
