"""mysql_statement_totals and its mysqld_exporter translation (perf_schema.
eventsstatementssum) on a row captured from MariaDB 10.11
(tests/fixtures/mariadb-10.11/statement_totals.tsv): units, and the empty digest table."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT, SCRAPERS
from tests.helpers.captured import FixtureConnection, tsv_rows

P = "mysql_perf_schema_events_statements_sum_"


def _read(rows: Any) -> Any:
    conn = FixtureConnection("mariadb", (10, 11, 19), {"statement_totals": rows})
    return registry()["mysql_statement_totals"].configured({}).read(conn)  # type: ignore[arg-type]


def _captured() -> Any:
    return _read(tsv_rows("mariadb-10.11/statement_totals.tsv"))


def test_dbgauge_families_in_base_units() -> None:
    collector = registry()["mysql_statement_totals"]
    assert not collector.default_enabled
    got = {s.name: s.value for s in collector.samples(_captured())}
    assert len(got) == 21
    assert got["dbgauge_mysql_statements_all_calls_total"] == 92
    assert got["dbgauge_mysql_statements_all_seconds_total"] == pytest.approx(0.341941933)
    assert got["dbgauge_mysql_statements_all_lock_seconds_total"] == pytest.approx(0.17488)
    assert got["dbgauge_mysql_statements_all_sort_scans_total"] == 27


def test_the_peer_families_keep_its_units() -> None:
    samples = list(DIALECT.samples("mysql_statement_totals", _captured()))
    assert {DIALECT.validate_sample(s).type for s in samples} == {"counter"}
    got = {s.name: s.value for s in samples}
    assert len(got) == 21 and not any(s.labels for s in samples)
    assert got[P + "timer_wait"] == pytest.approx(0.341941933)  # seconds
    assert got[P + "lock_time"] == 174880000000  # picoseconds, as the peer's
    assert got[P + "total"] == 92 and got[P + "no_index_used"] == 37
    assert SCRAPERS["mysql_statement_totals"] == ("perf_schema.eventsstatementssum",)


def test_an_empty_digest_table_gives_no_series_not_zeros() -> None:
    empty = [dict.fromkeys(tsv_rows("mariadb-10.11/statement_totals.tsv")[0])]  # all NULL
    facts = _read(empty)
    assert not list(registry()["mysql_statement_totals"].samples(facts))
    assert not list(DIALECT.samples("mysql_statement_totals", facts))
