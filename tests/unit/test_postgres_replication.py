"""postgres_replication on rows captured from the sandbox's PostgreSQL 15 (tests/fixtures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbgauge.app import registry
from dbgauge.collectors.postgres_replication import (
    PostgresReplication,
    Slot,
    Standby,
    local_samples,
    parse_local,
    parse_slots,
    parse_standbys,
    read_local,
    slot_samples,
    standby_samples,
)
from dbgauge.toolkit.metrics import Sample
from tests.helpers.captured import Answers

REGISTRY = registry()

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "postgres-15"
COLLECTOR = REGISTRY["postgres_replication"]


def rows(name: str) -> list[dict[str, Any]]:
    return list(json.loads((FIXTURES / f"{name}.json").read_text())["rows"])


def as_dict(samples: list[Sample]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for s in samples:
        COLLECTOR.validate_sample(s)  # declared name and label set
        key = (s.name, frozenset(s.labels.items()))
        assert key not in out, f"duplicate series {key}"
        out[key] = s.value
    return out


def get(d: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
        **labels: str) -> float | None:
    return d.get(("dbgauge_postgres_replication_" + name, frozenset(labels.items())))


def test_registered_default_on_for_postgres() -> None:
    assert isinstance(COLLECTOR, PostgresReplication)
    assert COLLECTOR.default_enabled and COLLECTOR.kind == "postgres"


def test_primary_side() -> None:
    d = as_dict(list(local_samples(parse_local(rows("replication_local-primary")[0]))))
    assert get(d, "configured") == 1.0 and get(d, "in_recovery") == 0.0
    assert get(d, "standbys") == 1.0 and get(d, "slots") == 1.0
    # standby-only series are not emitted on a primary
    assert get(d, "lag_seconds") is None and get(d, "replay_paused") is None
    assert not any(name.endswith("wal_receiver_status") for name, _ in d)


def test_standby_caught_up_has_zero_lag() -> None:
    row = rows("replication_local-standby-caught-up")[0]
    d = as_dict(list(local_samples(parse_local(row))))
    assert get(d, "in_recovery") == 1.0 and get(d, "configured") == 1.0
    assert get(d, "lag_seconds") == 0.0
    assert get(d, "receive_replay_lag_bytes") == 0.0
    assert (get(d, "last_replay_timestamp_seconds") or 0) > 1.6e9
    assert get(d, "replay_paused") == 0.0
    assert get(d, "wal_receiver_status", status="streaming") == 1.0
    assert get(d, "wal_receiver_status", status="stopped") == 0.0


def test_standby_with_replay_paused() -> None:
    row = rows("replication_local-standby-replay-paused")[0]
    d = as_dict(list(local_samples(parse_local(row))))
    assert (get(d, "receive_replay_lag_bytes") or 0) > 1_000_000
    assert (get(d, "lag_seconds") or 0) > 1.0
    assert get(d, "replay_paused") == 1.0


def test_primary_sees_standby_replay_lag() -> None:
    standbys = parse_standbys(rows("replication_standbys-replay-paused"))
    d = as_dict(list(standby_samples(standbys)))
    app = {"application_name": "pg-standby"}
    assert get(d, "standby_state", **app, state="streaming") == 1.0
    assert get(d, "standby_state", **app, state="catchup") == 0.0
    assert get(d, "standby_synchronous", **app) == 0.0
    assert get(d, "standby_sent_lag_bytes", **app) == 0.0
    assert (get(d, "standby_replay_lag_bytes", **app) or 0) > 1_000_000
    assert get(d, "standby_replay_lag_seconds", **app) is not None


def test_null_lag_times_mean_zero_only_when_caught_up() -> None:
    caught_up = {"application_name": "s1", "state": "streaming", "sync_state": "sync",
                 "sent_lag_bytes": 0, "write_lag_bytes": 0, "flush_lag_bytes": 0,
                 "replay_lag_bytes": 0, "write_lag_seconds": None, "flush_lag_seconds": None,
                 "replay_lag_seconds": None}
    behind = {**caught_up, "application_name": "s2", "replay_lag_bytes": 4096}
    d = as_dict(list(standby_samples(parse_standbys([caught_up, behind]))))
    assert get(d, "standby_replay_lag_seconds", application_name="s1") == 0.0
    assert get(d, "standby_synchronous", application_name="s1") == 1.0
    # NULL while behind is unknown, not 0
    assert get(d, "standby_replay_lag_seconds", application_name="s2") is None
    assert get(d, "standby_write_lag_seconds", application_name="s2") == 0.0


def test_duplicate_application_names_make_one_series() -> None:
    row = rows("replication_standbys-replay-paused")[0]
    samples = list(standby_samples(parse_standbys([row, {**row, "replay_lag_bytes": 1}])))
    d = as_dict(samples)  # raises on duplicates
    assert (get(d, "standby_replay_lag_bytes", application_name="pg-standby") or 0) > 1


def test_slots() -> None:
    d = as_dict(list(slot_samples(parse_slots(rows("replication_slots-primary")))))
    slot = {"slot_name": "pg_standby", "slot_type": "physical"}
    assert get(d, "slot_active", **slot) == 1.0
    assert (get(d, "slot_retained_wal_bytes", **slot) or 0) >= 0
    assert (get(d, "slot_safe_wal_size_bytes", **slot) or 0) > 0
    assert get(d, "slot_wal_status", **slot, wal_status="reserved") == 1.0
    assert get(d, "slot_wal_status", **slot, wal_status="lost") == 0.0
    unlimited = {**rows("replication_slots-primary")[0], "safe_wal_size": None,
                 "retained_bytes": None, "wal_status": "lost", "active": False}
    d = as_dict(list(slot_samples(parse_slots([unlimited]))))
    assert get(d, "slot_safe_wal_size_bytes", **slot) is None
    assert get(d, "slot_retained_wal_bytes", **slot) is None
    assert get(d, "slot_wal_status", **slot, wal_status="lost") == 1.0
    assert get(d, "slot_active", **slot) == 0.0


def test_standby_without_wal_receiver() -> None:
    row = {**rows("replication_local-standby-caught-up")[0], "wal_receiver_status": None,
           "wal_receiver_last_message_age_seconds": None, "receive_replay_bytes": None,
           "lag_seconds": None}
    d = as_dict(list(local_samples(parse_local(row))))
    assert get(d, "wal_receiver_status", status="stopped") == 1.0
    assert get(d, "lag_seconds") is None and get(d, "receive_replay_lag_bytes") is None
    assert get(d, "wal_receiver_last_message_age_seconds") is None


def test_unreplicated_primary_is_not_configured() -> None:
    row = {**rows("replication_local-primary")[0], "standbys": 0, "slots": 0}
    d = as_dict(list(local_samples(parse_local(row))))
    assert get(d, "configured") == 0.0


def test_collect_skips_queries_with_nothing_to_report() -> None:
    conn = Answers({"replication_local": rows("replication_local-standby-caught-up")})
    samples = list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    assert conn.asked == ["replication_local"]
    as_dict(samples)
    conn = Answers({"replication_local": rows("replication_local-primary"),
                     "replication_standbys": rows("replication_standbys-replay-paused"),
                     "replication_slots": rows("replication_slots-primary")})
    d = as_dict(list(COLLECTOR.collect(conn)))  # type: ignore[arg-type]
    assert conn.asked == ["replication_local", "replication_standbys", "replication_slots"]
    assert get(d, "slot_active", slot_name="pg_standby", slot_type="physical") == 1.0


def test_read_returns_facts_and_samples_are_pure() -> None:
    standbys = rows("replication_standbys-replay-paused")
    conn = Answers({"replication_local": rows("replication_local-primary"),
                     "replication_standbys": standbys + standbys,
                     "replication_slots": rows("replication_slots-primary")})
    facts = COLLECTOR.read(conn)  # type: ignore[arg-type]
    assert not facts.local.in_recovery and (facts.local.standbys, facts.local.slots) == (1, 1)
    # the facts keep both walsenders of one application_name; the samples keep the first
    assert [s.application_name for s in facts.standbys] == ["pg-standby", "pg-standby"]
    assert isinstance(facts.standbys[0], Standby) and facts.standbys[0].state == "streaming"
    assert facts.slots == (Slot("pg_standby", "physical", True,
                                facts.slots[0].retained_bytes, facts.slots[0].safe_wal_size,
                                "reserved"),)
    d = as_dict(list(COLLECTOR.samples(facts)))  # raises on duplicates
    assert get(d, "standby_state", application_name="pg-standby", state="streaming") == 1.0
    standby = Answers({"replication_local": rows("replication_local-standby-replay-paused")})
    local = COLLECTOR.read(standby).local  # type: ignore[arg-type]
    assert local.in_recovery and local.replay_paused and local.wal_receiver_status == "streaming"
    assert local.lag_seconds is not None and local.lag_seconds > 1.0
    alone = Answers({"replication_local": rows("replication_local-primary")})
    assert read_local(alone) == facts.local  # type: ignore[arg-type]
    assert alone.asked == ["replication_local"]  # what check lag runs on a primary
