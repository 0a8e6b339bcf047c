"""mysql_perf_schema_memory and its mysqld_exporter translation (perf_schema.memory_events)
on the top rows captured from MariaDB 10.11
(tests/fixtures/mariadb-10.11/perf_schema_memory.tsv): the prefix the peer strips, the
limit, and a NULL left out."""

from __future__ import annotations

from typing import Any

from dbgauge.app import registry
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT, SCRAPERS
from tests.helpers.captured import FixtureConnection, tsv_rows

P = "mysql_perf_schema_memory_events_"
SQLTEXT = "memory/performance_schema/events_statements_history_long.sqltext"


def _read(rows: Any, limit: int = 1000) -> Any:
    conn = FixtureConnection("mariadb", (10, 11, 19), {"perf_schema_memory": rows})
    return registry()["mysql_perf_schema_memory"].configured({"limit": limit}).read(conn)  # type: ignore[arg-type]


def _rows() -> Any:
    return tsv_rows("mariadb-10.11/perf_schema_memory.tsv")


def test_dbgauge_families() -> None:
    collector = registry()["mysql_perf_schema_memory"]
    assert not collector.default_enabled
    got = {(s.name, s.labels.get("event_name")): s.value for s in collector.samples(_read(_rows()))}
    assert got[("dbgauge_mysql_memory_used_bytes", SQLTEXT)] == 10240000
    assert got[("dbgauge_mysql_memory_freed_bytes_total", SQLTEXT)] == 0
    assert got[("dbgauge_mysql_memory_truncated", None)] == 0
    assert len(got) == 1 + 3 * 21


def test_the_peer_families_strip_memory_prefix() -> None:
    samples = list(DIALECT.samples("mysql_perf_schema_memory", _read(_rows())))
    types = {s.name: DIALECT.validate_sample(s).type for s in samples}
    assert types == {P + "alloc_bytes_total": "counter", P + "free_bytes_total": "counter",
                     P + "used_bytes": "gauge"}
    got = {(s.name, s.labels["event_name"]): s.value for s in samples}
    assert got[(P + "alloc_bytes_total", SQLTEXT.removeprefix("memory/"))] == 10240000
    assert not any(name.startswith("memory/") for _, name in got)
    assert SCRAPERS["mysql_perf_schema_memory"] == ("perf_schema.memory_events",)


def test_the_limit_and_a_null() -> None:
    collector = registry()["mysql_perf_schema_memory"]
    cut = {s.name: s.value for s in collector.samples(_read(_rows(), limit=2))}
    assert cut["dbgauge_mysql_memory_truncated"] == 1
    rows = _rows()[:1]
    rows[0] = {**rows[0], "bytes_free": None}
    assert not list(DIALECT.samples("mysql_perf_schema_memory", _read(rows)))
    names = {s.name for s in collector.samples(_read(rows))}
    assert "dbgauge_mysql_memory_freed_bytes_total" not in names
    assert "dbgauge_mysql_memory_used_bytes" in names
