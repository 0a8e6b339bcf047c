"""mariadb_query_response_time on captured QUERY_RESPONSE_TIME rows: cumulative buckets
with +Inf last, and a plugin that is absent or not collecting."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.collectors.mariadb_query_response_time import (
    MariaDBQueryResponseTime,
    ResponseTimeFacts,
    parse_configured,
    parse_ranges,
    response_time_samples,
)
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.metrics import Sample
from tests.helpers import as_dict, value
from tests.helpers.captured import FixtureConnection, tsv_rows


def test_query_response_time_buckets_are_cumulative_with_inf_last() -> None:
    rows = tsv_rows("mariadb-10.11/query_response_time.tsv")
    facts = parse_ranges(rows)
    counts = [float(r["count"]) for r in rows]
    bounds = [b for b, _ in facts.buckets]
    assert bounds == sorted(bounds) and bounds[-1] == float("inf") and len(bounds) == len(rows)
    cumulative = [c for _, c in facts.buckets]
    assert cumulative == sorted(cumulative) and cumulative[-1] == sum(counts)
    assert cumulative[0] == counts[0]
    finite_time = sum(float(r["total"]) for r in rows if r["total"].strip() != "TOO LONG")
    assert facts.seconds == pytest.approx(finite_time)
    samples = list(response_time_samples(facts))
    m = as_dict("mariadb_query_response_time", samples)
    les = [s.labels["le"] for s in samples if s.name == "dbgauge_mysql_query_response_time_total"]
    assert les[0] == "1e-06" and les[6] == "1.0" and les[-1] == "+Inf"
    assert value(m, "dbgauge_mysql_query_response_time_configured") == 1


def test_query_response_time_absent_plugin() -> None:
    assert not parse_configured([])
    assert not parse_configured([{"plugin_status": "ACTIVE", "stats": "OFF"}])
    assert parse_configured([{"plugin_status": "ACTIVE", "stats": "ON"}])
    conn = FixtureConnection("mariadb", (10, 11, 19), {"query_response_time_plugin": []})
    got = [(s.name, s.value) for s in MariaDBQueryResponseTime().collect(conn)]  # type: ignore[arg-type]
    assert got == [("dbgauge_mysql_query_response_time_configured", 0.0)]
    assert list(response_time_samples(ResponseTimeFacts(True))) == [
        Sample("dbgauge_mysql_query_response_time_configured", 1.0)]
    mysql8 = ServerInfo("mysql", (8, 0, 36), "8.0.36")
    assert not collector_supports(MariaDBQueryResponseTime(), mysql8)


def collector_supports(collector: Any, server: ServerInfo) -> bool:
    return bool(collector.supports(server))
