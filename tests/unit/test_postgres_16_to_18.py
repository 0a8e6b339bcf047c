"""dbgauge on rows captured from real PostgreSQL 16, 17 and 18 servers (the issue-29
findings; tests/fixtures/postgres-1{6,7,8}, capture_majors.py): reserved_connections,
parallel apply workers, restartpoints, logical walsenders."""

from __future__ import annotations

import pytest

from dbgauge.app import registry
from dbgauge.checks.health import health_checks
from dbgauge.checks.health.model import NodeOutcome
from dbgauge.collectors.postgres_checkpoints import parse_checkpoints
from dbgauge.collectors.postgres_database import parse_activity, read_connections
from dbgauge.collectors.postgres_replication import (
    PgReplicationFacts,
    parse_local,
    parse_slots,
    parse_standbys,
    parse_subscriptions,
)
from dbgauge.toolkit.targets import target_from_dsn
from tests.helpers import as_dict, value
from tests.helpers.captured import FixtureConnection, json_rows

REGISTRY = registry()
P, R = "dbgauge_postgres_", "dbgauge_postgres_replication_"
NODE = target_from_dsn("n=postgresql://u@h:5432/postgres")


def rows(relative: str) -> list[dict[str, object]]:
    major = relative.split("/")[0].removeprefix("postgres-")
    return json_rows(relative, f"PostgreSQL {major}.")


def evaluate(check: str, major: int, answers: dict[str, list[dict[str, object]]]
             ) -> tuple[NodeOutcome, list[str]]:
    conn = FixtureConnection("postgres", (major, 0), answers)
    return health_checks()[check].evaluate(NODE, conn, None), conn.asked  # type: ignore[arg-type]


# ---------------------------------------------------------------- 1. reserved_connections

def test_pg16_reserved_connections_are_not_room_for_applications() -> None:
    """max_connections 20, superuser_reserved 3, reserved 10: 7 sessions and the server
    refused an ordinary role; the limit is 7, not 17."""
    conn = FixtureConnection("postgres", (16, 0),
                             {"connections": rows("postgres-16/connections-reserved.json")})
    connections = read_connections(conn)  # type: ignore[arg-type]
    assert (connections.used, connections.available) == (7, 7)
    outcome, asked = evaluate("connections", 16, conn.answers)
    assert asked == ["connections"]
    assert outcome.note == ("7 of 7 connections in use (100% of max_connections - "
                            "superuser_reserved_connections - reserved_connections)")
    assert outcome.findings[0].severity.name == "CRITICAL"


def test_pg16_reserved_counts_are_metrics() -> None:
    activity, connections = parse_activity(rows("postgres-16/activity-reserved.json"))
    assert activity and connections.role_reserved_connections == 10
    from dbgauge.collectors.postgres_database import connection_samples

    m = as_dict("postgres_database", connection_samples(connections))
    assert value(m, P + "reserved_connections") == 10
    assert value(m, P + "superuser_reserved_connections") == 3
    assert value(m, P + "max_connections") == 20
    assert value(m, P + "connections", state="active") == 7


def test_before_16_there_is_no_reserved_connections_series() -> None:
    _, connections = parse_activity(rows("postgres-15/compat-activity-primary.json"))
    from dbgauge.collectors.postgres_database import connection_samples

    names = {s.name for s in connection_samples(connections)}
    assert P + "superuser_reserved_connections" in names
    assert P + "reserved_connections" not in names
    assert connections.limit_text == "max_connections - superuser_reserved_connections"


# ---------------------------------------------------------- 2. parallel apply workers

@pytest.mark.parametrize("major", [16, 17, 18])
def test_a_parallel_apply_worker_is_not_a_second_subscription(major: int) -> None:
    before = rows(f"postgres-{major}/replication_subscriptions-parallel-apply-before-fix.json")
    assert [r["subname"] for r in before] == ["sub", "sub"]  # what dbgauge read before
    after = rows(f"postgres-{major}/replication_subscriptions-parallel-apply.json")
    subs = parse_subscriptions(after)
    assert [(s.name, s.enabled, s.worker_running) for s in subs] == [("sub", True, True)]
    local = {"in_recovery": False, "standbys": 0, "slots": 0, "subscriptions": 1}
    outcome, asked = evaluate("replication", major, {"replication_local": [local],
                                                     "replication_subscriptions": after})
    assert asked == ["replication_local", "replication_subscriptions"]
    assert outcome.note.startswith("subscriber, 1 of 1 subscription(s) streaming")
    conn = FixtureConnection("postgres", (major, 0), {})
    assert ("leader_pid IS NULL" if major == 16 else "worker_type = 'apply'") in \
        conn.sql("replication_subscriptions")


# ------------------------------------------------------------------ 3. restartpoints

def test_pg17_standby_checkpoint_counts_include_restartpoints() -> None:
    row = rows("postgres-17/checkpoints-standby.json")[0]
    facts = parse_checkpoints(row)
    m = as_dict("postgres_checkpoints", REGISTRY["postgres_checkpoints"].samples(facts))
    # num_requested 1 (the copied primary's shutdown checkpoint) + 3 restartpoints requested
    assert (row["num_requested"], row["restartpoints_req"]) == (1, 3)
    assert value(m, P + "checkpoints_requested_total") == 4
    assert value(m, P + "checkpoints_timed_total") == row["num_timed"] + row[
        "restartpoints_timed"]
    assert value(m, P + "restartpoints_requested_total") == 3
    assert value(m, P + "restartpoints_done_total") == 2
    assert value(m, P + "restartpoints_timed_total") == 0
    assert P + "buffers_backend_total" not in {k[0] for k in m}  # left pg_stat_bgwriter in 17


@pytest.mark.parametrize("relative", ["postgres-17/checkpoints-primary.json",
                                      "postgres-18/checkpoints-primary.json"])
def test_on_a_primary_the_counts_are_pg_stat_checkpointers(relative: str) -> None:
    row = rows(relative)[0]
    m = as_dict("postgres_checkpoints",
                REGISTRY["postgres_checkpoints"].samples(parse_checkpoints(row)))
    assert value(m, P + "checkpoints_requested_total") == row["num_requested"]
    assert value(m, P + "checkpoints_timed_total") == row["num_timed"]
    assert value(m, P + "restartpoints_done_total") == 0
    assert not {P + "buffers_backend_total", P + "buffers_backend_fsync_total"} & {
        k[0] for k in m}


# ------------------------------------------------------------- 6. logical walsenders

def logical_primary() -> PgReplicationFacts:
    return PgReplicationFacts(
        parse_local(rows("postgres-17/replication_local-primary-logical.json")[0]),
        parse_standbys(rows("postgres-17/replication_standbys-primary-logical.json")),
        parse_slots(rows("postgres-17/replication_slots-primary-logical.json")))


def test_a_subscribers_walsender_is_not_a_standby() -> None:
    facts = logical_primary()
    assert (facts.local.standbys, facts.local.logical_senders) == (1, 1)
    assert [s.application_name for s in facts.physical] == ["s17"]
    assert [s.application_name for s in facts.logical] == ["sub"]
    m = as_dict("postgres_replication", REGISTRY["postgres_replication"].samples(facts))
    assert value(m, R + "standbys") == 1
    assert value(m, R + "logical_walsenders") == 1
    assert value(m, R + "standby_state", application_name="s17", state="streaming") == 1
    assert value(m, R + "standby_state", application_name="sub", state="streaming") is None
    assert value(m, R + "logical_walsender_state", application_name="sub",
                 state="streaming") == 1


def test_checks_count_standbys_only() -> None:
    answers = {"replication_local": rows("postgres-17/replication_local-primary-logical.json"),
               "replication_standbys": rows(
                   "postgres-17/replication_standbys-primary-logical.json"),
               "replication_slots": rows("postgres-17/replication_slots-primary-logical.json")}
    outcome, _ = evaluate("replication", 17, answers)
    assert outcome.note == ("primary, 1 standby(s) streaming, 1 of 1 logical walsender(s) "
                            "streaming to subscribers")
    lag, _ = evaluate("lag", 17, answers)
    assert lag.note.startswith("standby s17 lag ")
    alone = {**answers, "replication_local": [{**answers["replication_local"][0],
                                               "standbys": 0}],
             "replication_standbys": answers["replication_standbys"][1:]}
    outcome, _ = evaluate("replication", 17, alone)
    assert outcome.note.startswith("primary, 0 standby(s) streaming, 1 of 1 logical")
    lag, asked = evaluate("lag", 17, alone)
    assert asked == ["replication_local"] and "not a standby" in lag.note
