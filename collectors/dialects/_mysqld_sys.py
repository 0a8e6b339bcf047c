"""mysqld_exporter's sys.user_summary scraper (upstream 0.15+; Debian's 0.14 has none), from
the facts of dbgauge's mysql_sys_user_summary: merged into the mysqld_exporter dialect
(`FAMILIES`, `TRANSLATE`).

As upstream's: the two latencies in seconds (`mysql_sys_statement_latency` without a unit
suffix), `unique_hosts_total` a counter (dbgauge: the gauge `..._hosts`).
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors._summary import PICOSECONDS, Summary
from dbgauge.collectors.mysql_sys_user_summary import COLUMNS_INFO
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import MetricType, Sample

_TOP_N = "dbgauge keeps the collector's top N (`limit`); the peer has no limit"
# column -> (peer family, type, help): upstream's collector/sys_user_summary.go
_PEER: dict[str, tuple[str, MetricType, str]] = {
    "statements": ("statements_total", "counter", " The total number of statements for the "
                   "user"),
    "statement_latency": ("statement_latency", "counter", "The total wait time of timed "
                          "statements for the user"),
    "table_scans": ("table_scans_total", "counter", "The total number of table scans for the "
                    "user"),
    "file_ios": ("file_ios_total", "counter", "The total number of file I/O events for the "
                 "user"),
    "file_io_latency": ("file_io_seconds_total", "counter", "The total wait time of timed "
                        "file I/O events for the user"),
    "current_connections": ("current_connections", "gauge", "The current number of "
                            "connections for the user"),
    "total_connections": ("connections_total", "counter", "The total number of connections "
                          "for the user"),
    "unique_hosts": ("unique_hosts_total", "counter", "The number of distinct hosts from "
                     "which connections for the user have originated"),
    "current_memory": ("current_memory_bytes", "gauge", "The current amount of allocated "
                       "memory for the user"),
    "total_memory_allocated": ("memory_allocated_bytes_total", "counter", "The total amount "
                               "of allocated memory for the user"),
}
FAMILIES: tuple[PeerFamily, ...] = tuple(
    PeerFamily(PeerSpec(f"mysql_sys_{name}", type_, help_, ("user",)),
               f"dbgauge_mysql_user_summary_{COLUMNS_INFO[column][0]}",
               _TOP_N + "; upstream 0.15+ only")
    for column, (name, type_, help_) in _PEER.items())
_MINE = PeerFamilies(*FAMILIES)
_SECONDS = frozenset({"statement_latency", "file_io_latency"})


def user_summary(facts: Summary) -> Iterator[Sample]:
    """Per user the ten families; a row with a NULL fails the peer's scan: left out."""
    for row in facts.rows:
        if any(row.values.get(c) is None for c in _PEER):
            continue
        for column, (name, _, _) in _PEER.items():
            scale = PICOSECONDS if column in _SECONDS else 1.0
            yield _MINE.sample(f"mysql_sys_{name}", row.values[column] * scale,
                               {"user": row.keys[0]})


TRANSLATE: dict[str, Translate] = {"mysql_sys_user_summary": user_summary}
