"""mysqld_exporter's info_schema.innodb_tablespaces scraper, from the facts of dbgauge's
mysql_innodb_tablespaces: merged into the mysqld_exporter dialect (`FAMILIES`,
`TRANSLATE`).

Upstream's (0.16 on, prometheus/mysqld_exporter#860): on MariaDB 10.5+, whose
INNODB_SYS_TABLESPACES has no SPACE_TYPE, `space_type` is "". Debian's 0.14 asks for
SPACE_TYPE there and the scraper fails (no family at all); the names are the same.
`file_format` is the peer's query's quirk: the *name* of a FILE_FORMAT column where one
exists (MySQL 5.7), else "NONE"; neither MySQL 8 nor MariaDB 10.5+ has one: "NONE".
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors._summary import Summary
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import Sample

_IS = "mysql_info_schema_innodb_tablespace_"
_TOP_N = "dbgauge keeps the collector's largest N (`limit`); the peer has no limit"
FAMILIES: tuple[PeerFamily, ...] = (
    PeerFamily(PeerSpec(f"{_IS}space_info", "gauge", "The Tablespace information and Space ID.",
                        ("tablespace_name", "file_format", "row_format", "space_type")),
               "dbgauge_mysql_innodb_tablespace_info",
               _TOP_N + "; the value is the space id (dbgauge: a label); Debian's 0.14 "
               "fails on MariaDB 10.5+, upstream 0.16+ reads space_type \"\""),
    PeerFamily(PeerSpec(f"{_IS}file_size_bytes", "gauge", "The apparent size of the file, "
                        "which represents the maximum size of the file, uncompressed.",
                        ("tablespace_name",)),
               "dbgauge_mysql_innodb_tablespace_file_bytes", _TOP_N),
    PeerFamily(PeerSpec(f"{_IS}allocated_size_bytes", "gauge", "The actual size of the file, "
                        "which is the amount of space allocated on disk.",
                        ("tablespace_name",)),
               "dbgauge_mysql_innodb_tablespace_allocated_bytes", _TOP_N),
)
_MINE = PeerFamilies(*FAMILIES)


def innodb_tablespaces(facts: Summary) -> Iterator[Sample]:
    """Per tablespace: the info series (its value the space id) and the two sizes."""
    for row in facts.rows:
        name, row_format, space_type = row.keys
        space, size = row.values.get("space"), row.values.get("file_size")
        allocated = row.values.get("allocated_size")
        if space is None or size is None or allocated is None:
            continue  # the peer scans all three as numbers: a NULL fails its scrape
        yield _MINE.sample(f"{_IS}space_info", space, {
            "tablespace_name": name, "file_format": "NONE", "row_format": row_format,
            "space_type": space_type})
        yield _MINE.sample(f"{_IS}file_size_bytes", size, {"tablespace_name": name})
        yield _MINE.sample(f"{_IS}allocated_size_bytes", allocated, {"tablespace_name": name})


TRANSLATE: dict[str, Translate] = {"mysql_innodb_tablespaces": innodb_tablespaces}
