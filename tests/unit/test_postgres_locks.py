"""postgres_locks on rows captured during a real lock wait on PostgreSQL 15."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
from dbgauge.toolkit.metrics import Sample
from tests.helpers.captured import Answers

REGISTRY = registry()

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "postgres-15"
COLLECTOR = REGISTRY["postgres_locks"]


def rows(name: str) -> list[dict[str, Any]]:
    return list(json.loads((FIXTURES / f"{name}.json").read_text())["rows"])


def as_dict(samples: list[Sample]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for s in samples:
        COLLECTOR.validate_sample(s)
        out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def test_lock_wait_summary() -> None:
    for fixture in ("lock_summary-wait", "lock_summary_pg13-wait"):
        d = as_dict(list(summary_samples(parse_summary(rows(fixture)[0]))))
        assert d[("dbgauge_postgres_lock_waiting_backends", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_blocked_backends", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_blocking_backends", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_root_blockers", frozenset())] == 1
        assert d[("dbgauge_postgres_lock_oldest_wait_seconds", frozenset())] >= 1
        assert d[("dbgauge_postgres_oldest_transaction_age_seconds", frozenset())] >= 1
        assert d[("dbgauge_postgres_idle_in_transaction_sessions", frozenset())] == 1
        assert d[("dbgauge_postgres_idle_in_transaction_oldest_seconds", frozenset())] >= 1


def test_waits_by_type_and_mode() -> None:
    d = as_dict(list(wait_samples(parse_waits(rows("lock_waits-wait")))))
    assert d == {("dbgauge_postgres_lock_waits",
                  frozenset({("locktype", "relation"), ("mode", "AccessShareLock")})): 1.0}


def test_unknown_label_values_are_bounded() -> None:
    d = as_dict(list(wait_samples(parse_waits([
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
    quiet = {key: 0 for key in rows("lock_summary-wait")[0]}
    d = as_dict(list(summary_samples(parse_summary(quiet))))
    assert len(d) == 8 and set(d.values()) == {0.0}


def test_lock_waits_queried_only_when_someone_waits() -> None:
    quiet = [{key: 0 for key in rows("lock_summary-wait")[0]}]
    conn = Answers({"lock_summary": quiet})
    list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    assert conn.asked == ["lock_summary"]
    conn = Answers({"lock_summary": rows("lock_summary-wait"),
                     "lock_waits": rows("lock_waits-wait")})
    names = {s.name for s in COLLECTOR.collect(conn)}  # type: ignore[arg-type]
    assert "dbgauge_postgres_lock_waits" in names
    assert conn.asked == ["lock_summary", "lock_waits"]


def test_read_returns_facts_and_samples_are_pure() -> None:
    conn = Answers({"lock_summary": rows("lock_summary-wait"),
                     "lock_waits": rows("lock_waits-wait")})
    facts = COLLECTOR.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["lock_summary", "lock_waits"]
    assert facts.summary.waiting_backends == 1 and facts.summary.root_blockers == 1
    assert facts.summary.oldest_wait_seconds >= 1
    assert facts.waits == (LockWait("relation", "AccessShareLock", 1),)
    assert list(COLLECTOR.samples(facts)) == list(COLLECTOR.samples(facts))
    quiet = Answers({"lock_summary": [{key: None for key in rows("lock_summary-wait")[0]}]})
    facts = COLLECTOR.read(quiet)  # type: ignore[arg-type]
    assert facts == PgLockFacts(LockSummary(), ())  # NULL is 0, no waits read
    assert quiet.asked == ["lock_summary"]
    alone = Answers({"lock_summary": rows("lock_summary-wait")})
    assert read_summary(alone).blocked_backends == 1  # type: ignore[arg-type]
    assert alone.asked == ["lock_summary"]  # what check locks runs: never the waits
