"""mysql_status: SHOW GLOBAL STATUS and @@max_connections as facts, and the samples they give."""

from __future__ import annotations

from dbgauge.collectors.mysql_status import MySQLStatus, StatusFacts, parse_status_rows
from tests.helpers.captured import FixtureConnection

_ROWS = [{"Variable_name": k, "Value": v} for k, v in (
    ("Uptime", "3600"), ("Threads_connected", "5"), ("Threads_running", "2"),
    ("Max_used_connections", "9"), ("Questions", "1000"), ("Connections", "40"),
    ("Aborted_connects", "1"), ("Aborted_clients", "0"), ("Slow_queries", None))]


def test_read_returns_status_and_the_limit() -> None:
    conn = FixtureConnection("mariadb", (10, 11, 0), {
        "global_status_basic": _ROWS, "max_connections": [{"max_connections": 151}]})
    collector = MySQLStatus()
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["global_status_basic", "max_connections"]
    assert facts == StatusFacts(uptime=3600, threads_connected=5, threads_running=2,
                                max_used_connections=9, questions=1000, connections=40,
                                aborted_connects=1, aborted_clients=0, slow_queries=None,
                                max_connections=151)
    samples = list(collector.samples(facts))
    for sample in samples:
        collector.validate_sample(sample)
    assert [(s.name, s.value) for s in samples] == [
        ("dbgauge_mysql_uptime_seconds", 3600), ("dbgauge_mysql_threads_connected", 5),
        ("dbgauge_mysql_threads_running", 2), ("dbgauge_mysql_max_used_connections", 9),
        ("dbgauge_mysql_questions_total", 1000), ("dbgauge_mysql_connections_total", 40),
        ("dbgauge_mysql_aborted_connects_total", 1), ("dbgauge_mysql_aborted_clients_total", 0),
        ("dbgauge_mysql_max_connections", 151)]  # NULL Slow_queries: no series


def test_missing_values_are_none_not_zero() -> None:
    conn = FixtureConnection("mysql", (8, 4, 0), {
        "global_status_basic": [{"Variable_name": "Threads_connected", "Value": 3}],
        "max_connections": []})
    facts = MySQLStatus().read(conn)  # type: ignore[arg-type]
    assert facts == StatusFacts(threads_connected=3)
    assert [s.name for s in MySQLStatus().samples(facts)] == ["dbgauge_mysql_threads_connected"]
    assert parse_status_rows([{"Variable_name": "x", "Value": "abc"}]) == {}
