"""mysql_binlog: how much disk the binary logs take (MySQL and MariaDB).

Binary logs grow until expiry (binlog_expire_logs_seconds / expire_logs_days) or a PURGE:
a replica that holds them back, or an expiry set too long, fills the disk. From SHOW BINARY
LOGS: the total of File_size and the number of files. `dbgauge_mysql_binlog_enabled` is
always there: with log_bin off the collector reads nothing more, succeeds, and says 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import query
from dbgauge.toolkit.db.values import is_on, number
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

ENABLED = MetricSpec("dbgauge_mysql_binlog_enabled", "gauge",
                     "1 if the binary log is on (@@log_bin), else 0 (then no other binlog "
                     "series).")
BYTES = MetricSpec("dbgauge_mysql_binlog_bytes", "gauge",
                   "Disk used by the binary log files: the sum of SHOW BINARY LOGS File_size.")
FILES = MetricSpec("dbgauge_mysql_binlog_files", "gauge",
                   "Binary log files on disk (rows of SHOW BINARY LOGS).")
METRICS = MetricTable(ENABLED, BYTES, FILES)
BINLOG_MONITOR = {
    "mysql": "the REPLICATION CLIENT privilege (GRANT REPLICATION CLIENT ON *.* TO ...)",
    "mariadb": "the BINLOG MONITOR privilege (GRANT BINLOG MONITOR ON *.* TO ...)",
}


@dataclass(frozen=True)
class BinlogFacts:
    enabled: bool
    files: int = 0
    bytes: float | None = None  # None when no file reported a size


def parse_log_bin(rows: Sequence[Row]) -> bool:
    return bool(rows) and is_on(rows[0].get("log_bin"))


def parse_binary_logs(rows: Iterable[Row]) -> BinlogFacts:
    """SHOW BINARY LOGS rows -> file count and total size (NULL sizes not added)."""
    sizes = [number(row.get("File_size")) for row in rows]
    known = [s for s in sizes if s is not None]
    return BinlogFacts(True, len(sizes), sum(known) if known else None)


def binlog_samples(facts: BinlogFacts) -> Iterator[Sample]:
    yield Sample(ENABLED.name, 1.0 if facts.enabled else 0.0)
    if not facts.enabled:
        return
    yield Sample(FILES.name, float(facts.files))
    if facts.bytes is not None:
        yield Sample(BYTES.name, facts.bytes)


class MySQLBinlog(Collector[BinlogFacts]):
    name = "mysql_binlog"
    help = "Binary log files and their total size (SHOW BINARY LOGS); whether log_bin is on."
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> BinlogFacts:
        if not parse_log_bin(conn.query("binlog_enabled")):
            return BinlogFacts(False)
        return parse_binary_logs(query(conn, "binary_logs", BINLOG_MONITOR))

    def samples(self, facts: BinlogFacts) -> Iterable[Sample]:
        return binlog_samples(facts)
