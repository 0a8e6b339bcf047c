"""postgres_locks on rows captured during a real lock wait on PostgreSQL 15."""

from __future__ import annotations

from dbgauge.app import registry
from dbgauge.collectors.postgres_locks import (
    LockSummary,
    LockWait,
    PgLockFacts,
    parse_summary,
    parse_waits,
    read_summary,
    summary_samples,
    wait_samples,
)
from tests.helpers import as_dict
from tests.helpers.captured import Answers, json_rows

REGISTRY = registry()
COLLECTOR = REGISTRY["postgres_locks"]


def test_lock_wait_summary() -> None:
    for fixture in ("lock_summary-wait", "lock_summary_pg13-wait"):
        row = json_rows(f"postgres-15/{fixture}.json")[0]
        d = as_dict("postgres_locks", list(summary_samples(parse_summary(row))))
        assert d[("dbgauge_postgres_lock_waiting_backends", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_blocked_backends", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_blocking_backends", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_root_blockers", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_oldest_wait_seconds", frozenset())] >= 1
        assert d[("dbgauge_postgres_oldest_transaction_age_seconds", frozenset())] >= 1
        assert d[("dbgauge_postgres_idle_in_transaction_sessions", frozenset())] == 1
        assert d[("dbgauge_postgres_idle_in_transaction_oldest_seconds", frozenset())] >= 1


def test_waits_by_type_and_mode() -> None:
    waits = parse_waits(json_rows("postgres-15/lock_waits-wait.json"))
    d = as_dict("postgres_locks", list(wait_samples(waits)))
    assert d == {("dbgauge_postgres_lock_waits",
                  frozenset({("locktype", "relation"), ("mode", "AccessShareLock")})): 1.0}


def test_unknown_label_values_are_bounded() -> None:
    d = as_dict("postgres_locks", list(wait_samples(parse_waits([
        {"locktype": "relation", "mode": "AccessExclusiveLock", "backends": 2},
        {"locktype": "brand_new_type", "mode": "AccessExclusiveLock", "backends": 1},
        {"locktype": "another_new_type", "mode": "SIReadLock", "backends": 1},
    ]))))
    assert d[("dbgauge_postgres_lock_waits",
              frozenset({("locktype", "other"), ("mode", "AccessExclusiveLock")}))] == 1
    assert d[("dbgauge_postgres_lock_waits",
              frozenset({("locktype", "other"), ("mode", "other")}))] == 1
    assert len(d) == 3


def test_quiet_server_reports_zeros_not_absence() -> None:
    quiet = {key: 0 for key in json_rows("postgres-15/lock_summary-wait.json")[0]}
    d = as_dict("postgres_locks", list(summary_samples(parse_summary(quiet))))
    assert len(d) == 8 and set(d.values()) == {0.0}


def test_lock_waits_queried_only_when_someone_waits() -> None:
    quiet = [{key: 0 for key in json_rows("postgres-15/lock_summary-wait.json")[0]}]
    conn = Answers({"lock_summary": quiet, "lock_counts": []})
    list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    assert conn.asked == ["lock_summary", "lock_counts"]
    conn = Answers({"lock_summary": json_rows("postgres-15/lock_summary-wait.json"),
                     "lock_waits": json_rows("postgres-15/lock_waits-wait.json"),
                     "lock_counts": []})
    names = {s.name for s in COLLECTOR.collect(conn)}  # type: ignore[arg-type]
    assert "dbgauge_postgres_lock_waits" in names
    assert conn.asked == ["lock_summary", "lock_counts", "lock_waits"]


def test_read_returns_facts_and_samples_are_pure() -> None:
    conn = Answers({"lock_summary": json_rows("postgres-15/lock_summary-wait.json"),
                     "lock_waits": json_rows("postgres-15/lock_waits-wait.json"),
                     "lock_counts": []})
    facts = COLLECTOR.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["lock_summary", "lock_counts", "lock_waits"]
    assert facts.summary.waiting_backends == 1 and facts.summary.root_blockers == 1
    assert facts.summary.oldest_wait_seconds >= 1
    assert facts.waits == (LockWait("relation", "AccessShareLock", 1),)
    assert list(COLLECTOR.samples(facts)) == list(COLLECTOR.samples(facts))
    summary = json_rows("postgres-15/lock_summary-wait.json")[0]
    quiet = Answers({"lock_summary": [{key: None for key in summary}], "lock_counts": []})
    facts = COLLECTOR.read(quiet)  # type: ignore[arg-type]
    assert facts == PgLockFacts(LockSummary(), ())  # NULL is 0, no waits read
    assert quiet.asked == ["lock_summary", "lock_counts"]
    alone = Answers({"lock_summary": json_rows("postgres-15/lock_summary-wait.json")})
    assert read_summary(alone).blocked_backends == 1  # type: ignore[arg-type]
    assert alone.asked == ["lock_summary"]  # what check locks runs: never the waits
