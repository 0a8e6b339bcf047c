"""postgres_database on pg_stat_database / pg_stat_activity rows captured from PostgreSQL 15."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collectors.postgres_database import CONNECTION_STATES, connection_samples, database_samples
from toolkit.app import registry

REGISTRY = registry()

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "postgres-15"
COLLECTOR = REGISTRY["postgres_database"]


def rows(name: str) -> list[dict[str, Any]]:
    return list(json.loads((FIXTURES / f"{name}.json").read_text())["rows"])


def test_stat_database_rows() -> None:
    samples = list(database_samples(rows("stat_database")))
    for s in samples:
        COLLECTOR.validate_sample(s)
    by = {(s.name, s.labels["database"]): s.value for s in samples}
    assert {db for _, db in by} == {"app", "postgres", "template0", "template1"}
    assert by[("dbgauge_postgres_database_backends", "app")] >= 1
    assert by[("dbgauge_postgres_database_xact_commits_total", "app")] > 0
    assert by[("dbgauge_postgres_database_blocks_hit_total", "app")] > 0
    for name in ("temp_bytes_total", "deadlocks_total", "conflicts_total", "blocks_read_total",
                 "xact_rollbacks_total", "block_read_seconds_total"):
        assert ("dbgauge_postgres_database_" + name, "app") in by
    # never reset: no stats_reset series
    assert not any(name.endswith("stats_reset_timestamp_seconds") for name, _ in by)


def test_io_time_is_seconds() -> None:
    row = {**rows("stat_database")[0], "blk_read_time": 1500.0, "stats_reset": 1.7e9}
    by = {s.name: s.value for s in database_samples([row])}
    assert by["dbgauge_postgres_database_block_read_seconds_total"] == pytest.approx(1.5)
    assert by["dbgauge_postgres_database_stats_reset_timestamp_seconds"] == 1.7e9


def test_connections_by_state_always_complete() -> None:
    captured = {r["state"]: r["connections"] for r in rows("connections-wait")}
    samples = list(connection_samples(rows("connections-wait")))
    by = {s.labels["state"]: s.value for s in samples}
    assert set(by) == set(CONNECTION_STATES.values())
    # the waiter and dbgauge are active, the lock holder idle in its transaction
    assert by["active"] == captured["active"] >= 2
    assert by["idle_in_transaction"] == captured["idle in transaction"] == 1
    assert by["idle"] == captured.get("idle", 0)
    assert by["disabled"] == 0
    unknown = list(connection_samples([{"state": "some future state", "connections": 3}]))
    assert sum(s.value for s in unknown) == 0 and len(unknown) == len(CONNECTION_STATES)


class FakeConn:
    def __init__(self, answers: dict[str, list[dict[str, Any]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def query(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        self.asked.append(name)
        return self.answers[name]


def test_limits_ride_on_the_connections_rows() -> None:
    conn = FakeConn({"stat_database": rows("stat_database"),
                     "connections": rows("connections-wait")})
    samples = list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        COLLECTOR.validate_sample(s)
    by = {s.name: s.value for s in samples if not s.labels}
    assert by == {"dbgauge_postgres_max_connections": 50,
                  "dbgauge_postgres_superuser_reserved_connections": 3}
    assert conn.asked == ["stat_database", "connections"]
    conn = FakeConn({"stat_database": [], "connections": [],
                     "max_connections": [{"max_connections": 100, "reserved_connections": 3}]})
    by = {s.name: s.value for s in COLLECTOR.collect(conn) if not s.labels}  # type: ignore[arg-type]
    assert by["dbgauge_postgres_max_connections"] == 100
