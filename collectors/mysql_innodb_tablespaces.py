"""mysql_innodb_tablespaces: each InnoDB tablespace's file size and the disk it takes (MySQL
and MariaDB).

From information_schema.INNODB_TABLESPACES (MySQL 8) or INNODB_SYS_TABLESPACES (MariaDB):
the apparent file size (FILE_SIZE, what the tablespace may grow into uncompressed) and the
allocated size (ALLOCATED_SIZE, the blocks on disk: smaller for sparse or punched-hole
files), and an info series with the space id, row format and type. One tablespace per
table with innodb_file_per_table, so opt-in, as mysqld_exporter's
`--collect.info_schema.innodb_tablespaces`: `limit` (default 1000, the largest first)
bounds it and `..._truncated` says when tablespaces were left out. Needs PROCESS.
"""

from __future__ import annotations

from collections.abc import Iterable

from dbgauge.collectors._summary import (
    Summary,
    SummaryCollector,
    limit_option,
    truncated_sample,
    truncated_spec,
)
from dbgauge.toolkit.db.privileges import PROCESS
from dbgauge.toolkit.metrics import MetricSpec, MetricTable, Sample

_SRC = "information_schema.INNODB_TABLESPACES (MariaDB: INNODB_SYS_TABLESPACES)"
INFO = MetricSpec("dbgauge_mysql_innodb_tablespace_info", "gauge",
                  f"1 per InnoDB tablespace, with its id, row format and type ({_SRC}; "
                  "'NONE' where NULL, type '' on MariaDB, which has none).",
                  ("tablespace", "space_id", "row_format", "space_type"))
FILE_BYTES = MetricSpec("dbgauge_mysql_innodb_tablespace_file_bytes", "gauge",
                        f"Apparent size of the tablespace's file ({_SRC}.FILE_SIZE).",
                        ("tablespace",))
ALLOCATED_BYTES = MetricSpec("dbgauge_mysql_innodb_tablespace_allocated_bytes", "gauge",
                             "Disk allocated to the tablespace's file "
                             f"({_SRC}.ALLOCATED_SIZE).", ("tablespace",))
TRUNCATED = truncated_spec("dbgauge_mysql_innodb_tablespaces", "tablespaces")
METRICS = MetricTable(INFO, FILE_BYTES, ALLOCATED_BYTES, TRUNCATED)


class MySQLInnodbTablespaces(SummaryCollector):
    name = "mysql_innodb_tablespaces"
    help = ("InnoDB tablespaces' file and allocated sizes, id, row format and type, the "
            "largest N; opt-in.")
    metrics = METRICS
    options = limit_option(1000, "tablespaces, the largest allocation first")
    statement = "innodb_tablespaces"
    keys = ("name", "row_format", "space_type")
    columns = ("space", "file_size", "allocated_size")
    labels = ("tablespace", "row_format", "space_type")
    truncated = TRUNCATED
    privilege = PROCESS

    def samples(self, facts: Summary) -> Iterable[Sample]:
        yield truncated_sample(TRUNCATED, facts)
        for row in facts.rows:
            name, row_format, space_type = row.keys
            if (space := row.values.get("space")) is not None:
                yield Sample(INFO.name, 1.0, {"tablespace": name, "space_id": f"{space:.0f}",
                                              "row_format": row_format,
                                              "space_type": space_type})
            for spec, column in ((FILE_BYTES, "file_size"),
                                 (ALLOCATED_BYTES, "allocated_size")):
                if (value := row.values.get(column)) is not None:
                    yield Sample(spec.name, value, {"tablespace": name})
