"""The daily checks' pure parts: Group Replication member states on captured MySQL 8
outputs (no MySQL 8 server is installable here), logical subscriptions, and every check
wired into the CLI with thresholds that parse."""

from __future__ import annotations

from pathlib import Path

from dbgauge.checks.health import group_replication, health_checks
from dbgauge.checks.health.model import NodeOutcome
from dbgauge.checks.health.replication import subscription_findings
from dbgauge.collectors.postgres_replication import parse_subscriptions, subscription_samples
from dbgauge.toolkit.result import Status
from dbgauge.toolkit.targets import target_from_dsn
from tests.helpers.captured import FIXTURES, FixtureConnection, project
from tests.helpers.validate import mysql_table_rows

LIVE = FIXTURES / "validate" / "innodb" / "live"
NODE = target_from_dsn("gr1=mysql://mon@gr1:3306/")


def group(members: Path, stats: Path | None, version: tuple[int, ...]) -> NodeOutcome:
    """`check group-replication` on captured rows, through the collector's real statements
    (performance_schema.replication_group_members / _member_stats)."""
    conn = FixtureConnection("mysql", version, {})
    conn.answers = {
        "group_replication_members": project(conn.sql("group_replication_members"),
                                             mysql_table_rows(members)),
        "group_replication_member_stats": project(
            conn.sql("group_replication_member_stats"),
            mysql_table_rows(stats)) if stats else []}
    return group_replication.CHECK.evaluate(NODE, conn)  # type: ignore[arg-type]


def test_group_replication_healthy_groups_are_ok() -> None:
    # MySQL 8.0.18: SELECT * FROM performance_schema.replication_group_members (captured)
    outcome = group(FIXTURES / "mysql-8.0/replication_group_members_8.0.18.txt",
                            LIVE / "member_stats_8.0.18.txt", (8, 0, 18))
    assert outcome.findings == ()
    assert outcome.note == "3 of 3 members ONLINE, primary mgr02:3306"
    # MySQL 8.4.6 and 8.0.27 (the manual's example output), same statement
    for name, version in (("group_members_8.4.6.txt", (8, 4, 6)),
                          ("group_members_8.0.27.txt", (8, 0, 27))):
        outcome = group(LIVE / name, None, version)
        assert outcome.findings == (), name


def test_group_replication_member_states_and_quorum() -> None:
    # CONSTRUCTED from the 8.0.27 capture: one UNREACHABLE, one RECOVERING, of four
    outcome = group(LIVE / "group_members_constructed_degraded.txt", None, (8, 0, 27))
    found = {(f.kind, f.severity) for f in outcome.findings}
    assert found == {("member-unreachable", Status.CRITICAL),
                     ("member-recovering", Status.WARNING),
                     ("no-quorum", Status.CRITICAL)}  # 2 of 4 ONLINE is no majority
    assert dict(outcome.perfdata) == {"gr1:members_online": 2.0,
                                      "gr1:members": 4.0}
    conn = FixtureConnection("mariadb", (10, 11, 6), {})
    outcome = group_replication.CHECK.evaluate(NODE, conn)  # type: ignore[arg-type]
    assert outcome.findings == () and "no Group Replication on 10.11" in outcome.note
    assert conn.asked == []  # MariaDB is not asked for tables it does not have


def test_subscriptions_state_lag_and_samples() -> None:
    # CONSTRUCTED rows with the columns of sql/postgres/replication_subscriptions.sql
    subs = parse_subscriptions([
        {"subname": "ok", "enabled": True, "worker_running": True, "lag_bytes": 0,
         "lag_seconds": 0.2},
        {"subname": "off", "enabled": False, "worker_running": False, "lag_bytes": None,
         "lag_seconds": None},
        {"subname": "dead", "enabled": True, "worker_running": False}])
    found = [(f.kind, f.severity, f.detail) for f in subscription_findings("sub", subs)]
    assert found == [
        ("subscription-disabled", Status.CRITICAL, "subscription off is disabled"),
        ("subscription-not-running", Status.CRITICAL,
         "subscription dead is enabled but its apply worker is not running (see the "
         "subscriber's log: an apply error or an unreachable publisher)")]
    samples = {(s.name.rsplit("_replication_", 1)[1], s.labels["subscription"]): s.value
               for s in subscription_samples(subs)}
    assert samples[("subscription_lag_seconds", "ok")] == 0.2
    assert ("subscription_lag_seconds", "off") not in samples  # no worker: no lag
    assert samples[("subscription_enabled", "off")] == 0
    assert samples[("subscription_worker_running", "dead")] == 0


def test_every_check_is_registered_with_parsable_defaults() -> None:
    checks = health_checks()
    for name in ("txn-wraparound", "last-vacuum", "last-analyze", "sequence", "archiver",
                 "query-time", "txn-idle", "txn-time", "uptime", "history-list",
                 "group-replication"):
        assert name in checks, name
    uptime = checks["uptime"].defaults
    assert uptime is not None and str(uptime.warning) == "600:"
    assert uptime.status(60) is Status.CRITICAL and uptime.status(7200) is Status.OK


def test_connection_keeps_the_other_default_as_check_pgsql() -> None:
    """check_pgsql's rule for `connection`: a level given alone keeps the other's default
    (2 s / 8 s), unless the default would contradict it; elsewhere check_postgres' rule
    (the other level unset) stays."""
    connection = health_checks()["connection"]
    levels = {given: connection.limits(*given) for given in
              (("5", None), (None, "3"), (None, "1"), ("10", None))}
    assert {given: (str(t.warning), str(t.critical)) for given, t in levels.items()  # type: ignore[union-attr]
            } == {("5", None): ("5", "8"), (None, "3"): ("2", "3"),
                  (None, "1"): ("~:", "1"), ("10", None): ("10", "~:")}
    uptime = health_checks()["uptime"].limits(None, "60:")
    assert uptime is not None and str(uptime.warning) == "~:"
