"""postgres_replication on rows captured from the sandbox's PostgreSQL 15 (tests/fixtures)."""

from __future__ import annotations

from dbgauge.app import registry
from dbgauge.collectors.postgres_replication import (
    PgReplicationFacts,
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
from tests.helpers import as_dict, value
from tests.helpers.captured import Answers, json_rows

REGISTRY = registry()
COLLECTOR = REGISTRY["postgres_replication"]
R = "dbgauge_postgres_replication_"
LOCAL_PRIMARY = "postgres-15/replication_local-primary.json"
LOCAL_CAUGHT_UP = "postgres-15/replication_local-standby-caught-up.json"
LOCAL_PAUSED = "postgres-15/replication_local-standby-replay-paused.json"
STANDBYS_PAUSED = "postgres-15/replication_standbys-replay-paused.json"
SLOTS_PRIMARY = "postgres-15/replication_slots-primary.json"


def test_registered_default_on_for_postgres() -> None:
    assert isinstance(COLLECTOR, PostgresReplication)
    assert COLLECTOR.default_enabled and COLLECTOR.kind == "postgres"


def test_primary_side() -> None:
    local = parse_local(json_rows(LOCAL_PRIMARY)[0])
    d = as_dict("postgres_replication", list(local_samples(local)))
    assert value(d, R + "configured") == 1.0 and value(d, R + "in_recovery") == 0.0
    assert value(d, R + "standbys") == 1.0 and value(d, R + "slots") == 1.0
    # standby-only series are not emitted on a primary
    assert value(d, R + "lag_seconds") is None and value(d, R + "replay_paused") is None
    assert not any(name.endswith("wal_receiver_status") for name, _ in d)


def test_standby_caught_up_has_zero_lag() -> None:
    row = json_rows(LOCAL_CAUGHT_UP)[0]
    d = as_dict("postgres_replication", list(local_samples(parse_local(row))))
    assert value(d, R + "in_recovery") == 1.0 and value(d, R + "configured") == 1.0
    assert value(d, R + "lag_seconds") == 0.0
    assert value(d, R + "receive_replay_lag_bytes") == 0.0
    assert (value(d, R + "last_replay_timestamp_seconds") or 0) > 1.6e9
    assert value(d, R + "replay_paused") == 0.0
    assert value(d, R + "wal_receiver_status", status="streaming") == 1.0
    assert value(d, R + "wal_receiver_status", status="stopped") == 0.0


def test_standby_with_replay_paused() -> None:
    row = json_rows(LOCAL_PAUSED)[0]
    d = as_dict("postgres_replication", list(local_samples(parse_local(row))))
    assert (value(d, R + "receive_replay_lag_bytes") or 0) > 1_000_000
    assert (value(d, R + "lag_seconds") or 0) > 1.0
    assert value(d, R + "replay_paused") == 1.0


def test_primary_sees_standby_replay_lag() -> None:
    standbys = parse_standbys(json_rows(STANDBYS_PAUSED))
    d = as_dict("postgres_replication", list(standby_samples(standbys)))
    app = {"application_name": "pg-standby"}
    assert value(d, R + "standby_state", **app, state="streaming") == 1.0
    assert value(d, R + "standby_state", **app, state="catchup") == 0.0
    assert value(d, R + "standby_synchronous", **app) == 0.0
    assert value(d, R + "standby_sent_lag_bytes", **app) == 0.0
    assert (value(d, R + "standby_replay_lag_bytes", **app) or 0) > 1_000_000
    assert value(d, R + "standby_replay_lag_seconds", **app) is not None


def test_null_lag_times_mean_zero_only_when_caught_up() -> None:
    caught_up = {"application_name": "s1", "state": "streaming", "sync_state": "sync",
                 "sent_lag_bytes": 0, "write_lag_bytes": 0, "flush_lag_bytes": 0,
                 "replay_lag_bytes": 0, "write_lag_seconds": None, "flush_lag_seconds": None,
                 "replay_lag_seconds": None}
    behind = {**caught_up, "application_name": "s2", "replay_lag_bytes": 4096}
    d = as_dict("postgres_replication", list(standby_samples(parse_standbys([caught_up, behind]))))
    assert value(d, R + "standby_replay_lag_seconds", application_name="s1") == 0.0
    assert value(d, R + "standby_synchronous", application_name="s1") == 1.0
    # NULL while behind is unknown, not 0
    assert value(d, R + "standby_replay_lag_seconds", application_name="s2") is None
    assert value(d, R + "standby_write_lag_seconds", application_name="s2") == 0.0


def test_duplicate_application_names_make_one_series() -> None:
    row = json_rows(STANDBYS_PAUSED)[0]
    samples = list(standby_samples(parse_standbys([row, {**row, "replay_lag_bytes": 1}])))
    d = as_dict("postgres_replication", samples)  # raises on duplicates
    assert (value(d, R + "standby_replay_lag_bytes", application_name="pg-standby") or 0) > 1


def test_slots() -> None:
    d = as_dict("postgres_replication", list(slot_samples(parse_slots(json_rows(SLOTS_PRIMARY)))))
    slot = {"slot_name": "pg_standby", "slot_type": "physical"}
    assert value(d, R + "slot_active", **slot) == 1.0
    assert (value(d, R + "slot_retained_wal_bytes", **slot) or 0) >= 0
    assert (value(d, R + "slot_safe_wal_size_bytes", **slot) or 0) > 0
    assert value(d, R + "slot_wal_status", **slot, wal_status="reserved") == 1.0
    assert value(d, R + "slot_wal_status", **slot, wal_status="lost") == 0.0
    unlimited = {**json_rows(SLOTS_PRIMARY)[0], "safe_wal_size": None,
                 "retained_bytes": None, "wal_status": "lost", "active": False}
    d = as_dict("postgres_replication", list(slot_samples(parse_slots([unlimited]))))
    assert value(d, R + "slot_safe_wal_size_bytes", **slot) is None
    assert value(d, R + "slot_retained_wal_bytes", **slot) is None
    assert value(d, R + "slot_wal_status", **slot, wal_status="lost") == 1.0
    assert value(d, R + "slot_active", **slot) == 0.0


def test_standby_without_wal_receiver() -> None:
    row = {**json_rows(LOCAL_CAUGHT_UP)[0], "wal_receiver_status": None,
           "wal_receiver_last_message_age_seconds": None, "receive_replay_bytes": None,
           "lag_seconds": None}
    d = as_dict("postgres_replication", list(local_samples(parse_local(row))))
    assert value(d, R + "wal_receiver_status", status="stopped") == 1.0
    assert value(d, R + "lag_seconds") is None and value(d, R + "receive_replay_lag_bytes") is None
    assert value(d, R + "wal_receiver_last_message_age_seconds") is None


def test_unreplicated_primary_is_not_configured() -> None:
    row = {**json_rows(LOCAL_PRIMARY)[0], "standbys": 0, "slots": 0}
    d = as_dict("postgres_replication", list(local_samples(parse_local(row))))
    assert value(d, R + "configured") == 0.0


def test_collect_skips_queries_with_nothing_to_report() -> None:
    conn = Answers({"replication_local": json_rows(LOCAL_CAUGHT_UP)})
    samples = list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    assert conn.asked == ["replication_local"]
    as_dict("postgres_replication", samples)
    conn = Answers({"replication_local": json_rows(LOCAL_PRIMARY),
                     "replication_standbys": json_rows(STANDBYS_PAUSED),
                     "replication_slots": json_rows(SLOTS_PRIMARY)})
    d = as_dict("postgres_replication", list(COLLECTOR.collect(conn)))  # type: ignore[arg-type]
    assert conn.asked == ["replication_local", "replication_standbys", "replication_slots"]
    assert value(d, R + "slot_active", slot_name="pg_standby", slot_type="physical") == 1.0


def test_read_returns_facts_and_samples_are_pure() -> None:
    standbys = json_rows(STANDBYS_PAUSED)
    conn = Answers({"replication_local": json_rows(LOCAL_PRIMARY),
                     "replication_standbys": standbys + standbys,
                     "replication_slots": json_rows(SLOTS_PRIMARY)})
    facts = COLLECTOR.read(conn)  # type: ignore[arg-type]
    assert not facts.local.in_recovery and (facts.local.standbys, facts.local.slots) == (1, 1)
    # the facts keep both walsenders of one application_name; the samples keep the first
    assert [s.application_name for s in facts.standbys] == ["pg-standby", "pg-standby"]
    assert isinstance(facts.standbys[0], Standby) and facts.standbys[0].state == "streaming"
    assert facts.slots == (Slot("pg_standby", "physical", True,
                                facts.slots[0].retained_bytes, facts.slots[0].safe_wal_size,
                                "reserved"),)
    d = as_dict("postgres_replication", list(COLLECTOR.samples(facts)))  # raises on duplicates
    assert value(d, R + "standby_state", application_name="pg-standby", state="streaming") == 1.0
    standby = Answers({"replication_local": json_rows(LOCAL_PAUSED)})
    local = COLLECTOR.read(standby).local  # type: ignore[arg-type]
    assert local.in_recovery and local.replay_paused and local.wal_receiver_status == "streaming"
    assert local.lag_seconds is not None and local.lag_seconds > 1.0
    alone = Answers({"replication_local": json_rows(LOCAL_PRIMARY)})
    assert read_local(alone) == facts.local  # type: ignore[arg-type]
    assert alone.asked == ["replication_local"]  # what check lag runs on a primary


# CONSTRUCTED rows from here on: the captured standby row with the columns that say what
# the role could see, how silent the receiver is and whether replay ever timed a commit.


def test_lag_unknown_while_replay_is_behind_before_any_commit_is_replayed() -> None:
    """pg_last_xact_replay_timestamp() is NULL on a standby that has replayed no commit
    since it started: with bytes waiting the lag is unknown, not 0 (GREATEST made it 0)."""
    row = {**json_rows(LOCAL_CAUGHT_UP)[0], "receive_replay_bytes": 8192, "lag_seconds": None,
           "last_replay_timestamp": None}
    local = parse_local(row)
    assert local.lag_seconds is None and "no transaction has been replayed" in local.lag_unknown
    d = as_dict("postgres_replication", list(local_samples(local)))
    assert value(d, R + "lag_seconds") is None
    assert value(d, R + "receive_replay_lag_bytes") == 8192.0


def test_a_silent_receiver_is_lag_once_longer_than_a_working_link_is_silent() -> None:
    """An idle primary sends nothing until the receiver asks, after wal_receiver_timeout/2:
    29 s of silence with a 60 s timeout is a working link (lag stays the replay lag, 0);
    36 s is not (lag 36 s). No timeout (0): silence is never judged."""
    base = {**json_rows(LOCAL_CAUGHT_UP)[0], "lag_seconds": 0, "wal_receiver_status": "streaming",
            "wal_receiver_timeout_seconds": 60.0}
    idle = parse_local({**base, "wal_receiver_last_message_age_seconds": 29.0})
    assert idle.lag_seconds == 0.0 and not idle.receiver_silent
    stalled = parse_local({**base, "wal_receiver_last_message_age_seconds": 36.0})
    assert stalled.lag_seconds == 36.0 and stalled.receiver_silent
    off = parse_local({**base, "wal_receiver_last_message_age_seconds": 36.0,
                       "wal_receiver_timeout_seconds": 0.0})
    assert off.lag_seconds == 0.0 and not off.receiver_silent
    waiting = parse_local({**base, "wal_receiver_status": "waiting"})
    assert waiting.lag_seconds is None and "WAL receiver is waiting" in waiting.lag_unknown


def test_a_receiver_the_role_cannot_see_is_neither_stopped_nor_lag_free() -> None:
    """Without pg_read_all_stats pg_stat_wal_receiver shows the pid and NULL status: no
    receiver status series, no lag, and the collector fails naming the grant."""
    row = {**json_rows(LOCAL_CAUGHT_UP)[0], "wal_receiver_status": None,
           "wal_receiver_hidden": True, "role": "watcher",
           "wal_receiver_last_message_age_seconds": None}
    local = parse_local(row)
    assert local.lag_seconds is None
    assert local.hidden == ("the role watcher cannot see the WAL receiver (pg_stat_wal_receiver):"
                            ' GRANT pg_monitor TO "watcher" (or at least pg_read_all_stats)')
    d = as_dict("postgres_replication", list(local_samples(local)))
    assert not any(name == R + "wal_receiver_status" for name, _ in d)
    assert value(d, R + "in_recovery") == 1.0
    assert COLLECTOR.incomplete(PgReplicationFacts(local)) == local.hidden


def test_walsenders_the_role_cannot_see_are_no_count() -> None:
    row = {**json_rows(LOCAL_PRIMARY)[0], "standbys": 0, "standbys_hidden": 2, "slots": 0,
           "role": "watcher"}
    local = parse_local(row)
    d = as_dict("postgres_replication", list(local_samples(local)))
    assert value(d, R + "standbys") is None and value(d, R + "configured") is None
    assert "cannot see the state of 2 walsender(s)" in local.hidden


def test_a_standby_seen_from_its_primary() -> None:
    """Caught up: 0 whatever the silence. Behind and replying: PostgreSQL's replay_lag.
    Behind and silent longer than wal_receiver_status_interval + 5 s: the silence; silent
    past wal_sender_timeout/2 + 5 s: `silent` (check replication warns)."""
    base = {"application_name": "s", "state": "streaming", "replay_lag_bytes": 0,
            "replay_lag_seconds": None, "reply_age_seconds": 40.0,
            "status_interval_seconds": 10.0, "sender_timeout_seconds": 60.0}
    (caught_up,) = parse_standbys([base])
    assert caught_up.lag_seconds == 0.0 and caught_up.silent
    (replying,) = parse_standbys([{**base, "replay_lag_bytes": 100, "replay_lag_seconds": 0.5,
                                   "reply_age_seconds": 3.0}])
    assert replying.lag_seconds == 0.5 and not replying.silent
    (stalled,) = parse_standbys([{**base, "replay_lag_bytes": 100, "replay_lag_seconds": 0.5,
                                  "reply_age_seconds": 16.0}])
    assert stalled.lag_seconds == 16.0 and not stalled.silent
