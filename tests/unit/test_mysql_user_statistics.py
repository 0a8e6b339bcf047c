"""mysql_user_statistics and its mysqld_exporter translation (info_schema.userstats,
clientstats, tablestats, schemastats) on rows captured from MariaDB 10.11 with userstat=ON
(tests/fixtures/mariadb-10.11/*_statistics.tsv); userstat OFF, PROCESS missing and the
limit's truncation."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT, SCRAPERS
from dbgauge.toolkit.errors import DbgaugeError, QueryError
from dbgauge.toolkit.metrics import Sample
from tests.helpers.captured import FixtureConnection, tsv_rows

PROCESS_HELD = {"process_probe": [{"page_sizes": 5}]}
F = "mariadb-10.11/"


def _answers(userstat: int = 1) -> dict[str, list[Any]]:
    return {"userstat_enabled": [{"userstat": userstat}], **PROCESS_HELD,
            **{name: tsv_rows(F + name + ".tsv") for name in (
                "user_statistics", "client_statistics", "table_statistics",
                "schema_statistics")}}


def _read(answers: dict[str, Any], limit: int = 1000) -> Any:
    conn = FixtureConnection("mariadb", (10, 11, 19), answers)
    return registry()["mysql_user_statistics"].configured({"limit": limit}).read(conn)  # type: ignore[arg-type]


def _by(samples: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for s in samples:
        key = (s.name, frozenset(s.labels.items()))
        assert key not in out, key
        out[key] = s.value
    return out


def _key(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return (name, frozenset(labels.items()))


def test_dbgauge_families_from_captured_rows() -> None:
    collector = registry()["mysql_user_statistics"]
    assert not collector.default_enabled and collector.flavors == {"mariadb"}
    got = _by(collector.samples(_read(_answers())))
    assert got[_key("dbgauge_mysql_user_stats_connections_total", user="sandbox_admin")] == 9
    assert got[_key("dbgauge_mysql_user_stats_busy_seconds_total", user="sandbox_admin")] \
        == pytest.approx(0.187364)
    assert got[_key("dbgauge_mysql_table_stats_rows_changed_total", schema="compat_userstat",
                    table="t")] == 220
    assert got[_key("dbgauge_mysql_schema_stats_rows_read_total", schema="compat_userstat")] \
        == 412
    assert any(n == "dbgauge_mysql_client_stats_concurrent_connections" for n, _ in got)
    for what in ("user", "client", "table", "schema"):
        assert got[_key(f"dbgauge_mysql_{what}_stats_truncated")] == 0
    declared = {m.name for m in collector.metrics}
    assert {n for n, _ in got} <= declared


def test_the_peer_families_names_types_and_values() -> None:
    facts = _read(_answers())
    samples: list[Sample] = list(DIALECT.samples("mysql_user_statistics", facts))
    types = {s.name: DIALECT.validate_sample(s).type for s in samples}
    got = _by(samples)
    i_s = "mysql_info_schema_"
    assert got[_key(f"{i_s}user_statistics_total_connections", user="dbgauge")] == 3
    assert types[f"{i_s}user_statistics_concurrent_connections"] == "gauge"
    assert types[f"{i_s}user_statistics_cpu_time_seconds_total"] == "counter"
    # not in the peer's user map: untyped under the column's name; a counter for clients
    assert types[f"{i_s}user_statistics_max_statement_time_exceeded"] == "untyped"
    assert types[f"{i_s}client_statistics_max_statement_time_exceeded_total"] == "counter"
    assert got[_key(f"{i_s}table_statistics_rows_changed_x_indexes_total",
                    schema="compat_userstat", table="t")] == 440
    assert got[_key(f"{i_s}schema_statistics_rows_read_total", schema="mysql")] == 11
    # 24 columns per user and per client, 3 per table and schema: nothing else
    assert len(types) == 24 * 2 + 3 * 2
    assert not any("truncated" in name for name in types)
    assert SCRAPERS["mysql_user_statistics"] == (
        "info_schema.userstats", "info_schema.clientstats", "info_schema.tablestats",
        "info_schema.schemastats")


def test_userstat_off_fails_saying_what_to_set() -> None:
    with pytest.raises(DbgaugeError, match=r"userstat=OFF\): set userstat=ON"):
        _read(_answers(userstat=0))


class _NoProcess(FixtureConnection):
    """A session the server refuses the PROCESS probe (error 1227), as MariaDB does."""

    def query(self, name: str, params: Any = None) -> list[Any]:
        if name == "process_probe":
            raise QueryError("Access denied; you need the PROCESS privilege", errno=1227)
        return super().query(name, params)


def test_without_process_it_fails_naming_the_grant_and_reads_nothing() -> None:
    """USER_/CLIENT_STATISTICS answer a session without PROCESS with no rows: not read."""
    conn = _NoProcess("mariadb", (10, 11, 19), _answers())
    collector = registry()["mysql_user_statistics"].configured({})
    with pytest.raises(QueryError, match=r"GRANT PROCESS ON \*\.\*"):
        collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["userstat_enabled"]


def test_the_limit_keeps_the_busiest_and_says_it_truncated() -> None:
    collector = registry()["mysql_user_statistics"]
    got = _by(collector.samples(_read(_answers(), limit=2)))
    users = {dict(labels)["user"] for name, labels in got
             if name == "dbgauge_mysql_user_stats_connections_total"}
    assert users == {"sandbox_admin", "dbgauge"}  # the SQL's order: the most busy time
    assert got[_key("dbgauge_mysql_user_stats_truncated")] == 1
    assert got[_key("dbgauge_mysql_table_stats_truncated")] == 1
    assert got[_key("dbgauge_mysql_schema_stats_truncated")] == 0
