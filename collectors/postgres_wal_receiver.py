"""postgres_wal_receiver: a standby's WAL receiver in detail (pg_stat_wal_receiver): where it
started streaming, how far it has flushed, on which timelines, and when it last heard from
its upstream and last reported back.

postgres_replication already says whether the receiver streams and how long it has been
silent, at every scrape; this opt-in collector gives the positions and times behind that,
as postgres_exporter's opt-in stat_wal_receiver collector does, by upstream host and slot.
A primary has no receiver: no series. The role needs pg_read_all_stats to see more than the
receiver's pid: without it the collector fails naming the grant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.errors import NotVisible
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

_P = "dbgauge_postgres_wal_receiver_"
_L = ("upstream_host", "slot_name")


def _gauge(name: str, what: str) -> MetricSpec:
    return MetricSpec(_P + name, "gauge", f"{what} (pg_stat_wal_receiver).", _L)


# column -> our family
COLUMNS = {
    "receive_start_lsn": _gauge("start_lsn_bytes", "WAL position the receiver started "
                                "streaming at, in bytes from 0/0 (modulo 2^52)"),
    "flushed_lsn": _gauge("flushed_lsn_bytes", "WAL position received and flushed to disk, "
                          "in bytes from 0/0 (modulo 2^52)"),
    "receive_start_tli": _gauge("start_timeline", "Timeline the receiver started on"),
    "received_tli": _gauge("timeline", "Timeline of the last WAL position flushed"),
    "last_msg_send_time": _gauge("last_message_sent_timestamp_seconds",
                                 "When the upstream sent the last message received, in Unix "
                                 "seconds"),
    "last_msg_receipt_time": _gauge("last_message_received_timestamp_seconds",
                                    "When the last message from the upstream arrived, in "
                                    "Unix seconds"),
    "latest_end_lsn": _gauge("reported_lsn_bytes", "Last WAL position reported to the "
                             "upstream, in bytes from 0/0 (modulo 2^52)"),
    "latest_end_time": _gauge("reported_timestamp_seconds", "When the last WAL position was "
                              "reported to the upstream, in Unix seconds"),
}
METRICS = MetricTable(*COLUMNS.values())


@dataclass(frozen=True)
class WalReceiver:
    """The receiver's row: labels as the peer reads them (None where NULL), its values by
    column (NULL left out) and repmgr's node id."""

    upstream_host: str | None
    slot_name: str | None
    status: str | None
    values: Mapping[str, float]
    upstream_node: float | None


@dataclass(frozen=True)
class PgWalReceiverFacts:
    receiver: WalReceiver | None  # None: no receiver (a primary)
    hidden: bool = False
    role: str = ""

    @property
    def unseen(self) -> str:
        return pg_cannot_see("the WAL receiver (pg_stat_wal_receiver)", self.role) \
            if self.hidden else ""


def _node(value: object) -> float | None:
    digits = text(value)
    return float(digits) if digits.isdigit() else None


def parse_wal_receiver(rows: Iterable[Row]) -> PgWalReceiverFacts:
    """`wal_receiver` rows (one on a standby, none on a primary)."""
    row = next(iter(rows), None)
    if row is None:
        return PgWalReceiverFacts(None)
    if is_on(row.get("hidden")):
        return PgWalReceiverFacts(None, True, text(row.get("role")))

    def label(column: str) -> str | None:
        return None if row.get(column) is None else text(row.get(column))

    return PgWalReceiverFacts(WalReceiver(
        label("upstream_host"), label("slot_name"), label("status"),
        MappingProxyType({c: v for c in COLUMNS if (v := number(row.get(c))) is not None}),
        _node(row.get("upstream_node"))),
        role=text(row.get("role")))


def receiver_samples(facts: PgWalReceiverFacts) -> Iterator[Sample]:
    receiver = facts.receiver
    if receiver is None:
        return
    labels = {"upstream_host": receiver.upstream_host or "",
              "slot_name": receiver.slot_name or ""}
    for column, value in receiver.values.items():
        yield Sample(COLUMNS[column].name, value, labels)


class PostgresWalReceiver(Collector[PgWalReceiverFacts]):
    name = "postgres_wal_receiver"
    help = ("A standby's WAL receiver: start, flushed and reported positions, timelines, "
            "last message times, by upstream host and slot (pg_stat_wal_receiver); opt-in.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    default_enabled = False
    metrics = METRICS

    def read(self, conn: Connection) -> PgWalReceiverFacts:
        return parse_wal_receiver(conn.query("wal_receiver"))

    def samples(self, facts: PgWalReceiverFacts) -> Iterable[Sample]:
        if facts.hidden:
            raise NotVisible(facts.unseen)
        return receiver_samples(facts)
