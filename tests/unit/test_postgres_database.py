"""postgres_database on pg_stat_database / pg_stat_activity rows captured from PostgreSQL 15."""

from __future__ import annotations

import pytest

from dbgauge.app import registry
from dbgauge.collectors.postgres_database import (
    CONNECTION_STATES,
    PostgresDatabase,
    connection_samples,
    database_samples,
    parse_connections,
    parse_stat_database,
    read_connections,
)
from tests.helpers.captured import Answers, json_rows

REGISTRY = registry()
STAT_DATABASE = "postgres-15/compat-stat_database-primary.json"
ACTIVITY = "postgres-15/compat-activity-primary.json"
COLLECTOR = REGISTRY["postgres_database"]


def test_stat_database_rows() -> None:
    rows = json_rows("postgres-15/stat_database.json")
    samples = list(database_samples(parse_stat_database(rows)))
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
    row = {**json_rows("postgres-15/stat_database.json")[0], "blk_read_time": 1500.0,
           "stats_reset": 1.7e9}
    by = {s.name: s.value for s in database_samples(parse_stat_database([row]))}
    assert by["dbgauge_postgres_database_block_read_seconds_total"] == pytest.approx(1.5)
    assert by["dbgauge_postgres_database_stats_reset_timestamp_seconds"] == 1.7e9


def test_connections_by_state_always_complete() -> None:
    captured = {r["state"]: r["connections"]
                for r in json_rows("postgres-15/connections-wait.json")}
    captured_rows = json_rows("postgres-15/connections-wait.json")
    connections = parse_connections(captured_rows, captured_rows[0])
    samples = [s for s in connection_samples(connections) if s.labels]
    by = {s.labels["state"]: s.value for s in samples}
    assert dict(connections.by_state) == by and connections.used == sum(by.values())
    assert set(by) == set(CONNECTION_STATES.values())
    # the waiter and dbgauge are active, the lock holder idle in its transaction
    assert by["active"] == captured["active"] >= 2
    assert by["idle_in_transaction"] == captured["idle in transaction"] == 1
    assert by["idle"] == captured.get("idle", 0)
    assert by["disabled"] == 0
    future = parse_connections([{"state": "some future state", "connections": 3}],
                               {"max_connections": 10, "reserved_connections": 1})
    unknown = [s for s in connection_samples(future) if s.labels]
    assert sum(s.value for s in unknown) == 0 and len(unknown) == len(CONNECTION_STATES)
    assert (future.used, future.available) == (0, 9)


def test_limits_ride_on_the_connections_rows() -> None:
    conn = Answers({"stat_database": json_rows(STAT_DATABASE), "activity": json_rows(ACTIVITY)})
    samples = list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        COLLECTOR.validate_sample(s)
    by = {s.name: s.value for s in samples if not s.labels}
    assert by == {"dbgauge_postgres_max_connections": 300,
                  "dbgauge_postgres_superuser_reserved_connections": 3}
    assert conn.asked == ["stat_database", "activity"]
    conn = Answers({"stat_database": [], "activity": [],
                     "max_connections": [{"max_connections": 100, "reserved_connections": 3}]})
    by = {s.name: s.value for s in COLLECTOR.collect(conn) if not s.labels}  # type: ignore[arg-type]
    assert by["dbgauge_postgres_max_connections"] == 100


def test_read_returns_facts_and_samples_are_pure() -> None:
    conn = Answers({"stat_database": json_rows(STAT_DATABASE), "activity": json_rows(ACTIVITY)})
    collector = PostgresDatabase()
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["stat_database", "activity"]
    assert [db.name for db in facts.databases] == ["", "app", "drift", "postgres", "template0",
                                                   "template1"]
    assert facts.databases[0].shared and facts.databases[0].conflicts is None
    app = facts.databases[1]
    assert app.backends is not None and app.backends >= 1
    assert app.counters["xact_commit"] > 0 and app.stats_reset is None
    assert "blk_read_time" in app.counters  # milliseconds as read; samples scale them
    assert (facts.connections.max_connections, facts.connections.reserved_connections) == (300, 3)
    assert facts.connections.available == 297
    # dbgauge itself is the one client; the logical walsender (drift) and the physical one
    # (no database) are backends but not client connections
    assert facts.connections.by_state["active"] == 1 and facts.connections.used == 1
    again = list(collector.samples(facts))
    assert again == list(collector.samples(facts)) == list(collector.collect(Answers(
        dict(conn.answers))))  # type: ignore[arg-type]
    # the server-wide part alone: one statement (what check connections runs)
    alone = Answers({"connections": json_rows("postgres-15/connections-wait.json")})
    assert read_connections(alone).max_connections == 50  # type: ignore[arg-type]
    assert alone.asked == ["connections"]
