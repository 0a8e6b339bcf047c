"""mysql_sys_user_summary and its mysqld_exporter translation (sys.user_summary, upstream
0.15+) on rows captured from MariaDB 10.11 (tests/fixtures/mariadb-10.11/
sys_user_summary.tsv): units, negative memory, the limit, a NULL."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT, SCRAPERS
from tests.helpers.captured import FixtureConnection, tsv_rows


def _read(rows: Any, limit: int = 1000) -> Any:
    conn = FixtureConnection("mariadb", (10, 11, 19), {"sys_user_summary": rows})
    return registry()["mysql_sys_user_summary"].configured({"limit": limit}).read(conn)  # type: ignore[arg-type]


def _rows() -> Any:
    return tsv_rows("mariadb-10.11/sys_user_summary.tsv")


def test_dbgauge_families() -> None:
    collector = registry()["mysql_sys_user_summary"]
    assert not collector.default_enabled
    got = {(s.name, s.labels.get("user")): s.value for s in collector.samples(_read(_rows()))}
    assert got[("dbgauge_mysql_user_summary_statement_seconds_total", "dbgauge")] == \
        pytest.approx(0.012443104)
    assert got[("dbgauge_mysql_user_summary_memory_bytes", "sandbox_admin")] == -17536
    assert got[("dbgauge_mysql_user_summary_connections", "background")] == 9
    assert got[("dbgauge_mysql_user_summary_truncated", None)] == 0


def test_the_peer_families() -> None:
    samples = list(DIALECT.samples("mysql_sys_user_summary", _read(_rows())))
    types = {s.name: DIALECT.validate_sample(s).type for s in samples}
    assert len(types) == 10 and types["mysql_sys_unique_hosts_total"] == "counter"
    assert types["mysql_sys_current_memory_bytes"] == "gauge"
    got = {(s.name, s.labels["user"]): s.value for s in samples}
    assert got[("mysql_sys_statement_latency", "sandbox_admin")] == pytest.approx(0.3562357)
    assert got[("mysql_sys_file_io_seconds_total", "background")] == pytest.approx(
        0.095122753544)
    assert got[("mysql_sys_statements_total", "repl")] == 11
    assert SCRAPERS["mysql_sys_user_summary"] == ("sys.user_summary",)


def test_the_limit_and_a_null() -> None:
    collector = registry()["mysql_sys_user_summary"]
    cut = {(s.name, s.labels.get("user")) for s in collector.samples(_read(_rows(), limit=2))}
    assert ("dbgauge_mysql_user_summary_statements_total", "repl") not in cut
    rows = _rows()[:1]
    rows[0] = {**rows[0], "current_memory": None}
    assert not list(DIALECT.samples("mysql_sys_user_summary", _read(rows)))
