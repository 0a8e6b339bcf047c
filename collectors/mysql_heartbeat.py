"""mysql_heartbeat: replication lag measured by a heartbeat row, computed in the exporter.

On a `heartbeat: {mode: read}` target the collector reads the heartbeat table (dbgauge's
own, or an existing pt-heartbeat table) and reports how old the source's row is by the
exporter's clock: sub-second, and still growing while the replica's SQL thread is stopped
(Seconds_Behind_Source goes NULL then). mysqld_exporter exports only the raw timestamps
and leaves the subtraction to PromQL; both raw timestamps are here too.

Which row is the source's: `source_server_id` if configured, else the most recently
written row whose server_id is not this server's own -- after a failover that is the new
primary's row without any reconfiguration, and it costs no extra statement. On a
`mode: write` target it reads its own row, so the lag there is the writer's freshness
(at most about one interval when healthy).
Without heartbeat settings it reports `dbgauge_mysql_heartbeat_configured 0` and nothing
else, so the collector can stay on everywhere.

`read` returns `HeartbeatFacts` (the source's row and the exporter's clock when it was
read; `check lag` uses them too); `read_heartbeat_table` reads every row, for the
split-brain check's concurrent-writer test.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import query
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.heartbeat import heartbeat_sql, parse_ts
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
_NO_SUCH_TABLE = 1146
HEARTBEAT_NEEDS = "SELECT on the heartbeat table (GRANT SELECT ON dbgauge.* TO ...)"


@dataclass(frozen=True)
class HeartbeatRow:
    server_id: int
    ts: float  # Unix time


def parse_heartbeat_rows(rows: Iterable[Row]) -> list[HeartbeatRow]:
    """Rows of (server_id, ts) -> parsed rows; rows with an unreadable ts are skipped."""
    out: list[HeartbeatRow] = []
    for row in rows:
        server_id = number(row.get("server_id"))
        if server_id is None:
            continue
        try:
            out.append(HeartbeatRow(int(server_id), parse_ts(row.get("ts"))))
        except ValueError:
            continue
    return out


def pick_source_row(rows: list[HeartbeatRow], own_server_id: int | None,
                    wanted: int | None) -> HeartbeatRow | None:
    """The row to measure: `wanted` if given, else the newest row not written by us."""
    if wanted is not None:
        return next((r for r in rows if r.server_id == wanted), None)
    others = [r for r in rows if r.server_id != own_server_id]
    return max(others, key=lambda r: r.ts, default=None)


@dataclass(frozen=True)
class HeartbeatTable:
    """Every row of a heartbeat table, and the server_id of the server that was read."""

    rows: tuple[HeartbeatRow, ...]
    own_server_id: int | None  # None when the table has no row


def read_heartbeat_table(conn: Connection, table: str) -> HeartbeatTable:
    """The rows of `table` (schema.name); QueryError when it cannot be read, with a hint
    when it does not exist."""
    (statement,) = heartbeat_sql(conn.server.flavor, "heartbeat_read", table)
    try:
        raw = query(conn, "heartbeat_read", HEARTBEAT_NEEDS, sql=statement)
    except QueryError as exc:
        if exc.errno != _NO_SUCH_TABLE:
            raise
        raise exc.again(f"heartbeat table {table} does not exist on this server: "
                        "run a heartbeat writer (heartbeat: {mode: write}) on the source, "
                        f"or set heartbeat.table to pt-heartbeat's table ({exc})") from None
    own = int(number(raw[0].get("own_server_id")) or 0) if raw else None
    return HeartbeatTable(tuple(parse_heartbeat_rows(raw)), own)


@dataclass(frozen=True)
class HeartbeatReading:
    """The source's heartbeat row and the exporter's clock when it was read."""

    source: HeartbeatRow
    now: float  # Unix time

    @property
    def lag(self) -> float:
        """How old the row is by the exporter's clock (0 if the writer's clock is ahead)."""
        return max(0.0, self.now - self.source.ts)


@dataclass(frozen=True)
class HeartbeatFacts:
    """What the collector read: None on a target without heartbeat settings."""

    reading: HeartbeatReading | None


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
        """The source's row; QueryError when the table or the row is missing."""
        settings = conn.target.heartbeat if conn.target is not None else None
        if settings is None:
            return HeartbeatFacts(None)
        table = read_heartbeat_table(conn, settings.table)
        now = self._clock()
        wanted = table.own_server_id if settings.mode == "write" else settings.source_server_id
        row = pick_source_row(list(table.rows), table.own_server_id, wanted)
        if row is None:
            which = f"server_id {wanted}" if wanted is not None else "another server"
            raise QueryError(f"no heartbeat row from {which} in {settings.table} "
                             f"({len(table.rows)} row(s)): is a heartbeat writer running on "
                             "the source?")
        return HeartbeatFacts(HeartbeatReading(row, now))

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
