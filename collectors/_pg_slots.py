"""Replication slots, for postgres_replication: every slot of the server with the WAL it
retains, how much more it may retain, and its wal_status."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Row
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.metrics import MetricSpec, Sample, state_set

_P = "dbgauge_postgres_replication_"

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


@dataclass(frozen=True)
class Slot:
    """One `replication_slots` row."""

    slot_name: str
    slot_type: str
    active: bool
    retained_bytes: float | None = None  # None for a slot that never reserved WAL
    safe_wal_size: float | None = None  # None without max_slot_wal_keep_size
    wal_status: str = ""
    database: str = ""  # "" for a physical slot
    current_lsn_bytes: float | None = None  # this server's WAL position (received, standby)
    confirmed_flush_lsn_bytes: float | None = None  # 0 for a physical slot


def parse_slots(rows: Iterable[Row]) -> tuple[Slot, ...]:
    """`replication_slots` rows -> Slot."""
    return tuple(Slot(str(row["slot_name"]), str(row.get("slot_type")), is_on(row.get("active")),
                      number(row.get("retained_bytes")), number(row.get("safe_wal_size")),
                      str(row.get("wal_status") or ""), text(row.get("database")),
                      number(row.get("current_lsn_bytes")),
                      number(row.get("confirmed_flush_lsn_bytes")))
                 for row in rows)


def slot_samples(slots: Iterable[Slot]) -> Iterator[Sample]:
    """Per-slot series."""
    for slot in slots:
        labels = {"slot_name": slot.slot_name, "slot_type": slot.slot_type}
        yield Sample(SLOT_ACTIVE.name, 1.0 if slot.active else 0.0, labels)
        if slot.retained_bytes is not None:
            yield Sample(SLOT_RETAINED.name, slot.retained_bytes, labels)
        if slot.safe_wal_size is not None:
            yield Sample(SLOT_SAFE.name, slot.safe_wal_size, labels)
        yield from state_set(SLOT_WAL_STATUS, "wal_status", WAL_STATUSES, slot.wal_status,
                             labels)
