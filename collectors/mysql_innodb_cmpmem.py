"""mysql_innodb_cmpmem: the buffer pool's memory for compressed pages, per page size and
buffer pool instance (information_schema.INNODB_CMPMEM).

Blocks in use and free per compressed page size, and the relocations of blocks (count and
time: RELOCATION_TIME is in microseconds, exported in seconds).
Cheap (a few rows), so default-enabled, as in mysqld_exporter (one of its defaults).
Needs PROCESS.
"""

from __future__ import annotations

from dbgauge.collectors._summary import SummaryCollector
from dbgauge.toolkit.db.privileges import PROCESS
from dbgauge.toolkit.metrics import MetricSpec, MetricTable

_SRC = "information_schema.INNODB_CMPMEM"
_LABELS = ("page_size", "buffer_pool")
KEYS = ("page_size", "buffer_pool_instance")
COLUMNS = ("pages_used", "pages_free", "relocation_ops", "relocation_time")
MICROSECONDS = 1e-6
_LIMIT = 10_000  # five page sizes per buffer pool instance (at most 64 instances)

USED = MetricSpec("dbgauge_mysql_innodb_cmpmem_used_pages", "gauge",
                  f"Blocks of this compressed page size in use ({_SRC}.PAGES_USED).", _LABELS)
FREE = MetricSpec("dbgauge_mysql_innodb_cmpmem_free_pages", "gauge",
                  f"Blocks of this compressed page size free for allocation ({_SRC}.PAGES_FREE).",
                  _LABELS)
RELOCATIONS = MetricSpec("dbgauge_mysql_innodb_cmpmem_relocation_ops_total", "counter",
                         f"Blocks of this size relocated ({_SRC}.RELOCATION_OPS).", _LABELS)
RELOCATION_SECONDS = MetricSpec("dbgauge_mysql_innodb_cmpmem_relocation_seconds_total",
                                "counter", f"Time spent relocating blocks ({_SRC}."
                                "RELOCATION_TIME, microseconds on the server).", _LABELS)
METRICS = MetricTable(USED, FREE, RELOCATIONS, RELOCATION_SECONDS)
FAMILIES = {
    "pages_used": (USED, "", 1.0), "pages_free": (FREE, "", 1.0),
    "relocation_ops": (RELOCATIONS, "", 1.0),
    "relocation_time": (RELOCATION_SECONDS, "", MICROSECONDS),
}


class MySQLInnodbCmpmem(SummaryCollector):
    name = "mysql_innodb_cmpmem"
    help = ("Buffer pool blocks for compressed pages in use and free, and their relocations, "
            "per page size and buffer pool instance (information_schema.INNODB_CMPMEM).")
    metrics = METRICS
    default_enabled = True
    statement, privilege, fixed_limit = "innodb_cmpmem", PROCESS, _LIMIT
    keys, columns, labels, families = KEYS, COLUMNS, _LABELS, FAMILIES
