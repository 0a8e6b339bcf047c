"""mysql_innodb_tablespaces and its mysqld_exporter translation (info_schema.
innodb_tablespaces, upstream's families) on rows captured from MariaDB 10.11
(tests/fixtures/mariadb-10.11/innodb_tablespaces.tsv) and on MySQL 8's shape (SPACE_TYPE,
written here from MySQL 8.0's documented INNODB_TABLESPACES columns: no MySQL server is at
hand to capture from); the limit and the statement each flavor runs."""

from __future__ import annotations

from typing import Any

from dbgauge.app import registry
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT, SCRAPERS
from dbgauge.toolkit.sql import load_sql
from tests.helpers.captured import FixtureConnection, tsv_rows

Key = tuple[str, frozenset[tuple[str, str]]]
MYSQL8 = [
    {"name": "innodb_system", "row_format": "Compact or Redundant", "space_type": "System",
     "space": 0, "file_size": 12582912, "allocated_size": 12587008},
    {"name": "app/t", "row_format": "Dynamic", "space_type": "Single", "space": 9,
     "file_size": 114688, "allocated_size": 114688},
]


def _read(flavor: str, version: tuple[int, int, int], rows: Any, limit: int = 1000) -> Any:
    conn = FixtureConnection(flavor, version, {"innodb_tablespaces": rows})
    collector = registry()["mysql_innodb_tablespaces"].configured({"limit": limit})
    return collector.read(conn)  # type: ignore[arg-type]


def _by(samples: Any) -> dict[Key, float]:
    out: dict[Key, float] = {}
    for s in samples:
        key = (s.name, frozenset(s.labels.items()))
        assert key not in out, key
        out[key] = s.value
    return out


def _mariadb(limit: int = 1000) -> Any:
    return _read("mariadb", (10, 11, 19), tsv_rows("mariadb-10.11/innodb_tablespaces.tsv"),
                 limit)


def test_dbgauge_families_from_mariadb_rows() -> None:
    collector = registry()["mysql_innodb_tablespaces"]
    assert not collector.default_enabled
    got = _by(collector.samples(_mariadb()))
    assert got[("dbgauge_mysql_innodb_tablespace_info", frozenset({
        ("tablespace", "compat_tablespaces/c"), ("space_id", "7"),
        ("row_format", "Compressed"), ("space_type", "")}))] == 1
    assert got[("dbgauge_mysql_innodb_tablespace_allocated_bytes",
                frozenset({("tablespace", "innodb_system")}))] == 12587008
    assert got[("dbgauge_mysql_innodb_tablespaces_truncated", frozenset())] == 0


def test_the_peer_families_on_mariadb_and_mysql_8() -> None:
    samples = list(DIALECT.samples("mysql_innodb_tablespaces", _mariadb()))
    assert {DIALECT.validate_sample(s).type for s in samples} == {"gauge"}
    got = _by(samples)
    p = "mysql_info_schema_innodb_tablespace_"
    assert got[(f"{p}space_info", frozenset({
        ("tablespace_name", "innodb_temporary"), ("file_format", "NONE"),
        ("row_format", "NONE"), ("space_type", "")}))] == 4294967294
    assert got[(f"{p}file_size_bytes", frozenset({("tablespace_name", "mysql/gtid_slave_pos")}))] \
        == 65536
    assert len(got) == 3 * 6
    mysql = _by(DIALECT.samples("mysql_innodb_tablespaces", _read("mysql", (8, 0, 36), MYSQL8)))
    assert mysql[(f"{p}space_info", frozenset({
        ("tablespace_name", "app/t"), ("file_format", "NONE"), ("row_format", "Dynamic"),
        ("space_type", "Single")}))] == 9
    assert SCRAPERS["mysql_innodb_tablespaces"] == ("info_schema.innodb_tablespaces",)


def test_each_flavor_reads_its_table() -> None:
    assert "INNODB_SYS_TABLESPACES" in load_sql("mariadb", "innodb_tablespaces", (10, 11, 19))
    mysql = load_sql("mysql", "innodb_tablespaces", (8, 0, 36))
    assert "INNODB_TABLESPACES" in mysql and "SPACE_TYPE" in mysql


def test_the_limit_keeps_the_largest() -> None:
    got = _by(registry()["mysql_innodb_tablespaces"].samples(_mariadb(limit=2)))
    names = {dict(k)["tablespace"] for n, k in got
             if n == "dbgauge_mysql_innodb_tablespace_file_bytes"}
    assert names == {"innodb_system", "innodb_temporary"}
    assert got[("dbgauge_mysql_innodb_tablespaces_truncated", frozenset())] == 1
