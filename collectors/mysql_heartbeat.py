"""mysql_heartbeat: replication lag measured by a heartbeat row, computed in the exporter.

On a `heartbeat: {mode: read}` target the collector reads the heartbeat table (dbgauge's
own, or an existing pt-heartbeat table) and reports how old the source's row is by the
exporter's clock: sub-second, and still growing while the replica's SQL thread is stopped
(Seconds_Behind_Source goes NULL then). mysqld_exporter exports only the raw timestamps
and leaves the subtraction to PromQL; both raw timestamps are here too.

Which row is the source's, and how it is read, is `toolkit.heartbeat.read_source`'s (the
one home of the heartbeat row): `source_server_id` if configured, else the most recently
written row not this server's own, which follows a failover; on a `mode: write` target its
own row, so the lag there is the writer's freshness (at most about one interval when
healthy). Without heartbeat settings it reports `dbgauge_mysql_heartbeat_configured 0` and
nothing else, so the collector can stay on everywhere.

`read` returns `HeartbeatFacts` (the source's row and the exporter's clock when it was
read; `check lag` uses them too).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.heartbeat import HeartbeatReading, read_source
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

CONFIGURED = MetricSpec(
    "dbgauge_mysql_heartbeat_configured", "gauge",
    "1 if the target has heartbeat settings (heartbeat: read or write), else 0; the other "
    "heartbeat series exist only while it is 1.")
LAG = MetricSpec(
    "dbgauge_mysql_heartbeat_lag_seconds", "gauge",
    "Age of the source's heartbeat row by the exporter's clock: scrape time minus the "
    "row's ts (0 if the writer's clock is ahead). Keeps growing while replication is "
    "stopped; on a heartbeat writer it is the age of its own row.")
STORED = MetricSpec(
    "dbgauge_mysql_heartbeat_stored_timestamp_seconds", "gauge",
    "The heartbeat row's ts as Unix time (read as UTC, as pt-heartbeat --utc writes it).")
NOW = MetricSpec(
    "dbgauge_mysql_heartbeat_now_timestamp_seconds", "gauge",
    "The exporter's clock when it read the heartbeat row, Unix time.")
SOURCE = MetricSpec(
    "dbgauge_mysql_heartbeat_source_server_id", "gauge",
    "server_id of the heartbeat row the lag is computed from.")
METRICS = MetricTable(CONFIGURED, LAG, STORED, NOW, SOURCE)


@dataclass(frozen=True)
class HeartbeatFacts:
    """What the collector read: None on a target without heartbeat settings."""

    reading: HeartbeatReading | None


def read_heartbeat(conn: Connection, clock: Callable[[], float] = time.time) -> HeartbeatFacts:
    """The source's row as `clock` saw it read (no reading on a target without heartbeat
    settings); QueryError when the table or the row is missing."""
    settings = conn.target.heartbeat if conn.target is not None else None
    if settings is None:
        return HeartbeatFacts(None)
    return HeartbeatFacts(read_source(conn, settings, clock))


class MySQLHeartbeat(Collector[HeartbeatFacts]):
    name = "mysql_heartbeat"
    help = ("Heartbeat lag in the exporter from a dbgauge or pt-heartbeat table (targets with "
            "heartbeat: read), plus the raw timestamps; 'configured 0' elsewhere.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    def read(self, conn: Connection) -> HeartbeatFacts:
        return read_heartbeat(conn, self._clock)

    def samples(self, facts: HeartbeatFacts) -> Iterable[Sample]:
        reading = facts.reading
        if reading is None:
            yield Sample(CONFIGURED.name, 0.0)
            return
        yield Sample(CONFIGURED.name, 1.0)
        yield Sample(LAG.name, reading.lag)
        yield Sample(STORED.name, reading.source.ts)
        yield Sample(NOW.name, reading.now)
        yield Sample(SOURCE.name, float(reading.source.server_id))
