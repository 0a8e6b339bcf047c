"""mysql_group_replication on captured MySQL 8.0/8.4 groups (through its real statements), a
degraded group, and servers without Group Replication."""

from __future__ import annotations

from pathlib import Path

from dbgauge.collectors.mysql_group_replication import MySQLGroupReplication
from dbgauge.toolkit.db import ServerInfo
from tests.helpers import Metrics, as_dict, value
from tests.helpers.captured import FIXTURES, FixtureConnection, project
from tests.helpers.validate import mysql_table_rows

LIVE = FIXTURES / "validate/innodb/live"


def group(members: Path, stats: Path | None, version: tuple[int, ...]) -> Metrics:
    """mysql_group_replication on captured rows, through its real statements."""
    conn = FixtureConnection("mysql", version, {})
    conn.answers = {
        "group_replication_members": project(conn.sql("group_replication_members"),
                                             mysql_table_rows(members)),  # type: ignore[arg-type]
        "group_replication_member_stats": project(
            conn.sql("group_replication_member_stats"),
            mysql_table_rows(stats)) if stats else []}  # type: ignore[arg-type]
    return as_dict("mysql_group_replication",
                   MySQLGroupReplication().collect(conn))  # type: ignore[arg-type]


def test_group_replication_on_a_captured_8_0_group() -> None:
    m = group(FIXTURES / "mysql-8.0/replication_group_members_8.0.18.txt",
              LIVE / "member_stats_8.0.18.txt", (8, 0, 18))
    assert value(m, "dbgauge_mysql_group_replication_configured") == 1
    for member in ("mgr01:3306", "mgr02:3306", "mgr03:3306"):
        assert value(m, "dbgauge_mysql_group_replication_member_online", member=member) == 1
        assert value(m, "dbgauge_mysql_group_replication_member_state", member=member,
                     state="ONLINE") == 1
        assert value(m, "dbgauge_mysql_group_replication_member_state", member=member,
                     state="UNREACHABLE") == 0
        assert value(m, "dbgauge_mysql_group_replication_applier_queue", member=member) == 0
        assert value(m, "dbgauge_mysql_group_replication_certifier_queue",
                     member=member) == 0
        assert value(m, "dbgauge_mysql_group_replication_conflicts_detected_total",
                     member=member) == 0
    assert value(m, "dbgauge_mysql_group_replication_primary", member="mgr02:3306") == 1
    assert value(m, "dbgauge_mysql_group_replication_primary", member="mgr01:3306") == 0


def test_group_replication_8_4_and_a_degraded_group() -> None:
    m = group(LIVE / "group_members_8.4.6.txt", None, (8, 4, 6))
    assert value(m, "dbgauge_mysql_group_replication_primary", member="10.10.0.11:3306") == 1
    assert value(m, "dbgauge_mysql_group_replication_applier_queue",
                 member="10.10.0.11:3306") is None  # no stats row: no sample
    degraded = group(LIVE / "group_members_constructed_degraded.txt",
                     LIVE / "member_stats_8.0.18.txt", (8, 0, 27))
    assert value(degraded, "dbgauge_mysql_group_replication_member_online",
                 member="example2:4420") == 0
    assert value(degraded, "dbgauge_mysql_group_replication_member_state",
                 member="example2:4420", state="UNREACHABLE") == 1
    assert value(degraded, "dbgauge_mysql_group_replication_member_state",
                 member="example3:4430", state="RECOVERING") == 1


def test_no_group_replication_is_no_member_series_and_no_error() -> None:
    placeholder = [{"member_id": "", "member_host": "", "member_port": None,
                    "member_state": "OFFLINE", "member_role": ""}]
    for rows in ([], placeholder):
        conn = FixtureConnection("mysql", (8, 0, 36), {"group_replication_members": rows})
        got = [(s.name, s.value) for s in MySQLGroupReplication().collect(conn)]  # type: ignore[arg-type]
        assert got == [("dbgauge_mysql_group_replication_configured", 0.0)]
        assert conn.asked == ["group_replication_members"]
    mariadb = ServerInfo("mariadb", (10, 11, 19), "10.11.19-MariaDB")
    assert not MySQLGroupReplication().supports(mariadb)
    assert MySQLGroupReplication().supports(ServerInfo("mysql", (8, 0, 18), "8.0.18"))
