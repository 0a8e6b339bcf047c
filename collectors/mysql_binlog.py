"""mysql_binlog: how much disk the binary logs take (MySQL and MariaDB).

Binary logs grow until expiry (binlog_expire_logs_seconds / expire_logs_days) or a PURGE:
a replica that holds them back, or an expiry set too long, fills the disk. From SHOW BINARY
LOGS: the total of File_size, the number of files and the newest file's sequence number
(the extension of its name, which grows by one at each rotation: its rate is the rotation
rate). `dbgauge_mysql_binlog_enabled` is
always there: with log_bin off the collector reads nothing more, succeeds, and says 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import query
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

ENABLED = MetricSpec("dbgauge_mysql_binlog_enabled", "gauge",
                     "1 if the binary log is on (@@log_bin), else 0 (then no other binlog "
                     "series).")
BYTES = MetricSpec("dbgauge_mysql_binlog_bytes", "gauge",
                   "Disk used by the binary log files: the sum of SHOW BINARY LOGS File_size.")
FILES = MetricSpec("dbgauge_mysql_binlog_files", "gauge",
                   "Binary log files on disk (rows of SHOW BINARY LOGS).")
FILE_NUMBER = MetricSpec("dbgauge_mysql_binlog_file_number", "gauge",
                         "Sequence number of the newest binary log file (the extension of "
                         "the last SHOW BINARY LOGS Log_name, e.g. 42 for binlog.000042).")
METRICS = MetricTable(ENABLED, BYTES, FILES, FILE_NUMBER)
BINLOG_MONITOR = {
    "mysql": "the REPLICATION CLIENT privilege (GRANT REPLICATION CLIENT ON *.* TO ...)",
    "mariadb": "the BINLOG MONITOR privilege (GRANT BINLOG MONITOR ON *.* TO ...)",
}


@dataclass(frozen=True)
class BinlogFacts:
    enabled: bool
    files: int = 0
    bytes: float | None = None  # None when no file reported a size
    last_file: str = ""  # the newest file's name (SHOW BINARY LOGS lists them oldest first)

    @property
    def file_number(self) -> float | None:
        """The newest file's sequence number; None when its name has no numeric extension."""
        _, _, extension = self.last_file.rpartition(".")
        return float(extension) if extension.isdigit() else None


def parse_log_bin(rows: Sequence[Row]) -> bool:
    return bool(rows) and is_on(rows[0].get("log_bin"))


def parse_binary_logs(rows: Iterable[Row]) -> BinlogFacts:
    """SHOW BINARY LOGS rows -> file count and total size (NULL sizes not added)."""
    files = list(rows)
    sizes = [number(row.get("File_size")) for row in files]
    known = [s for s in sizes if s is not None]
    last = text(files[-1].get("Log_name")) if files else ""
    return BinlogFacts(True, len(sizes), sum(known) if known else None, last)


def binlog_samples(facts: BinlogFacts) -> Iterator[Sample]:
    yield Sample(ENABLED.name, 1.0 if facts.enabled else 0.0)
    if not facts.enabled:
        return
    yield Sample(FILES.name, float(facts.files))
    if facts.bytes is not None:
        yield Sample(BYTES.name, facts.bytes)
    if facts.file_number is not None:
        yield Sample(FILE_NUMBER.name, facts.file_number)


class MySQLBinlog(Collector[BinlogFacts]):
    name = "mysql_binlog"
    help = ("Binary log files, their total size and the newest file's number (SHOW BINARY "
            "LOGS); whether log_bin is on.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> BinlogFacts:
        if not parse_log_bin(conn.query("binlog_enabled")):
            return BinlogFacts(False)
        return parse_binary_logs(query(conn, "binary_logs", BINLOG_MONITOR))

    def samples(self, facts: BinlogFacts) -> Iterable[Sample]:
        return binlog_samples(facts)
