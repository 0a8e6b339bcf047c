"""mysql_innodb_cmp: InnoDB page compression work per compressed page size
(information_schema.INNODB_CMP).

For ROW_FORMAT=COMPRESSED tables: pages compressed (attempts and successes) and
uncompressed, and the seconds spent, per page size (1K to 16K: five rows). A low
success ratio means pages split and recompress.
Cheap (a few rows), so default-enabled, as in mysqld_exporter (one of its defaults).
Needs PROCESS.
"""

from __future__ import annotations

from dbgauge.collectors._summary import SummaryCollector
from dbgauge.toolkit.db.privileges import PROCESS
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "information_schema.INNODB_CMP"
_LABELS = ("page_size",)
KEYS = ("page_size",)
COLUMNS = ("compress_ops", "compress_ops_ok", "compress_time", "uncompress_ops",
           "uncompress_time")
_LIMIT = 100  # the server has one row per compressed page size (five)


def _counter(name: str, column: str, what: str) -> MetricSpec:
    return MetricSpec(f"dbgauge_mysql_innodb_cmp_{name}_total", "counter",
                      f"{what}, per compressed page size ({_SRC}.{column}).", _LABELS)


COMPRESS = _counter("compress_ops", "COMPRESS_OPS", "B-tree pages compressed (attempts)")
COMPRESS_OK = _counter("compress_ok_ops", "COMPRESS_OPS_OK",
                       "B-tree pages compressed successfully")
COMPRESS_SECONDS = _counter("compress_seconds", "COMPRESS_TIME",
                            "Time spent compressing B-tree pages")
UNCOMPRESS = _counter("uncompress_ops", "UNCOMPRESS_OPS", "B-tree pages uncompressed")
UNCOMPRESS_SECONDS = _counter("uncompress_seconds", "UNCOMPRESS_TIME",
                              "Time spent uncompressing B-tree pages")
METRICS = MetricTable(COMPRESS, COMPRESS_OK, COMPRESS_SECONDS, UNCOMPRESS, UNCOMPRESS_SECONDS)
FAMILIES = {
    "compress_ops": (COMPRESS, "", 1.0), "compress_ops_ok": (COMPRESS_OK, "", 1.0),
    "compress_time": (COMPRESS_SECONDS, "", 1.0), "uncompress_ops": (UNCOMPRESS, "", 1.0),
    "uncompress_time": (UNCOMPRESS_SECONDS, "", 1.0),
}


class MySQLInnodbCmp(SummaryCollector):
    name = "mysql_innodb_cmp"
    help = ("InnoDB compression: pages compressed (and how many succeeded), uncompressed, "
            "and the time spent, per page size (information_schema.INNODB_CMP).")
    metrics = METRICS
    default_enabled = True
    statement, privilege, fixed_limit = "innodb_cmp", PROCESS, _LIMIT
    keys, columns, labels, families = KEYS, COLUMNS, _LABELS, FAMILIES
