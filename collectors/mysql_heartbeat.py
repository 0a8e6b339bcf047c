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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolkit.db import Connection
from toolkit.db.privileges import query
from toolkit.db.values import number
from toolkit.errors import QueryError
from toolkit.heartbeat import heartbeat_sql, parse_ts
from toolkit.metrics import Collector, MetricSpec, Sample

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
_NO_SUCH_TABLE = 1146
HEARTBEAT_NEEDS = "SELECT on the heartbeat table (GRANT SELECT ON dbgauge.* TO ...)"


@dataclass(frozen=True)
class HeartbeatRow:
    server_id: int
    ts: float  # Unix time


def parse_heartbeat_rows(rows: Iterable[Mapping[str, Any]]) -> list[HeartbeatRow]:
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


class MySQLHeartbeat(Collector):
    name = "mysql_heartbeat"
    help = ("Heartbeat lag in the exporter from a dbgauge or pt-heartbeat table (targets with "
            "heartbeat: read), plus the raw timestamps; 'configured 0' elsewhere.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = (CONFIGURED, LAG, STORED, NOW, SOURCE)

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    def collect(self, conn: Connection) -> Iterable[Sample]:
        settings = conn.target.heartbeat if conn.target is not None else None
        if settings is None:
            yield Sample(CONFIGURED.name, 0.0)
            return
        (statement,) = heartbeat_sql(conn.server.flavor, "heartbeat_read", settings.table)
        try:
            raw = query(conn, "heartbeat_read", HEARTBEAT_NEEDS, sql=statement)
        except QueryError as exc:
            if exc.errno != _NO_SUCH_TABLE:
                raise
            raise exc.again(f"heartbeat table {settings.table} does not exist on this server: "
                             "run a heartbeat writer (heartbeat: {mode: write}) on the source, "
                             f"or set heartbeat.table to pt-heartbeat's table ({exc})") from None
        now = self._clock()
        rows = parse_heartbeat_rows(raw)
        own = int(number(raw[0].get("own_server_id")) or 0) if raw else None
        wanted = own if settings.mode == "write" else settings.source_server_id
        row = pick_source_row(rows, own, wanted)
        if row is None:
            which = f"server_id {wanted}" if wanted is not None else "another server"
            raise QueryError(f"no heartbeat row from {which} in {settings.table} "
                             f"({len(rows)} row(s)): is a heartbeat writer running on the "
                             "source?")
        yield Sample(CONFIGURED.name, 1.0)
        yield Sample(LAG.name, max(0.0, now - row.ts))
        yield Sample(STORED.name, row.ts)
        yield Sample(NOW.name, now)
        yield Sample(SOURCE.name, float(row.server_id))
