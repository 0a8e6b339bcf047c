"""Heartbeat helpers: identifier quoting, pt-heartbeat timestamps, picking the source row,
the SQL the writer and reader run, and the writer's bookkeeping without a server."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import parse_config, registry
from dbgauge.collectors.mysql_heartbeat import HeartbeatFacts, MySQLHeartbeat
from dbgauge.toolkit.errors import DbgaugeError, QueryError
from dbgauge.toolkit.heartbeat import (
    HeartbeatRow,
    format_ts,
    heartbeat_sql,
    parse_heartbeat_rows,
    parse_ts,
    pick_source_row,
    split_table,
    table_name,
)
from tests.helpers.captured import FixtureConnection

REGISTRY = registry()


@pytest.mark.parametrize("bad", ["heartbeat", "a.b.c", "a.b`; DROP TABLE x; --", "a-b.c",
                                 ".hb", "db."])
def test_heartbeat_table_must_be_two_plain_identifiers(bad: str) -> None:
    with pytest.raises(DbgaugeError):
        split_table(bad)


def test_split_table() -> None:
    assert split_table("per$cona.hb_1") == ("per$cona", "hb_1")
    # pt-heartbeat's -D and --table; a --table that names its schema stands alone
    assert table_name("percona", "heartbeat") == "percona.heartbeat"
    assert table_name("dbgauge", "ops.hb") == "ops.hb"


def test_timestamps_round_trip_like_pt_heartbeat() -> None:
    ts = format_ts(1700000000.123456)
    assert ts == "2023-11-14T22:13:20.123456" and len(ts) == 26  # varchar(26)
    assert parse_ts(ts) == pytest.approx(1700000000.123456, abs=1e-6)
    assert parse_ts(b"2023-11-14 22:13:20") == 1700000000.0
    assert parse_ts("2023-11-14T22:13:20.5") == 1700000000.5
    with pytest.raises(ValueError):
        parse_ts("yesterday")


def test_pick_source_row() -> None:
    rows = [HeartbeatRow(1, 100.0), HeartbeatRow(2, 300.0), HeartbeatRow(3, 200.0)]
    assert pick_source_row(rows, own_server_id=2, wanted=None) == HeartbeatRow(3, 200.0)
    assert pick_source_row(rows, own_server_id=3, wanted=1) == HeartbeatRow(1, 100.0)
    assert pick_source_row(rows, own_server_id=3, wanted=9) is None
    assert pick_source_row([HeartbeatRow(2, 1.0)], own_server_id=2, wanted=None) is None
    parsed = parse_heartbeat_rows([{"server_id": 1, "ts": "2023-11-14T22:13:20.000000"},
                                   {"server_id": 2, "ts": "garbage"}, {"server_id": None}])
    assert parsed == [HeartbeatRow(1, 1700000000.0)]


def test_statements_quote_the_configured_table() -> None:
    (write,) = heartbeat_sql("mysql", "heartbeat_write", "dbgauge.heartbeat")
    assert write.startswith("REPLACE INTO `dbgauge`.`heartbeat` (ts, server_id)")
    assert "%s" in write and "@@GLOBAL.server_id" in write
    ddl = heartbeat_sql("schema", "mysql_heartbeat", "ops.hb")
    assert ddl[0] == "CREATE DATABASE IF NOT EXISTS `ops`"
    assert ddl[1].startswith("CREATE TABLE IF NOT EXISTS `ops`.`hb`")
    for column in ("ts                    varchar(26)     NOT NULL",
                   "server_id             int unsigned    NOT NULL PRIMARY KEY",
                   "file                  varchar(255)", "position              bigint unsigned",
                   "relay_master_log_file varchar(255)", "exec_master_log_pos   bigint unsigned"):
        assert column in ddl[1]
    (read,) = heartbeat_sql("mariadb", "heartbeat_read", "percona.heartbeat")
    assert "FROM `percona`.`heartbeat`" in read


def config_file(heartbeat: str = "") -> str:
    return ("targets:\n  - name: t\n    kind: mysql\n    dsn: mysql://u@127.0.0.1:1/\n"
            + (f"    heartbeat: {heartbeat}\n" if heartbeat else ""))


def test_collector_without_heartbeat_settings_says_so_and_queries_nothing() -> None:
    target = parse_config(config_file()).all_targets()[0]
    conn = FixtureConnection("mariadb", (10, 11, 0), {}, target=target)
    samples = list(REGISTRY["mysql_heartbeat"].collect(conn))  # type: ignore[arg-type]
    assert [(s.name, s.value) for s in samples] == [("dbgauge_mysql_heartbeat_configured", 0.0)]
    assert conn.asked == []


class HeartbeatConnection(FixtureConnection):
    """Answers the heartbeat read, which names the configured table itself."""

    def execute_sql(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        self.asked.append(sql)
        return self.answers["heartbeat_read"]


def test_read_returns_the_source_row_and_the_clock() -> None:
    target = parse_config(config_file("{mode: read}")).all_targets()[0]
    rows = [{"server_id": 1, "ts": "2023-11-14T22:13:20.000000", "own_server_id": 2},
            {"server_id": 2, "ts": "2023-11-14T22:13:29.000000", "own_server_id": 2}]
    conn = HeartbeatConnection("mariadb", (10, 11, 0), {"heartbeat_read": rows}, target=target)
    collector = MySQLHeartbeat(clock=lambda: 1700000002.5)
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["SELECT server_id, ts, @@GLOBAL.server_id AS own_server_id "
                          "FROM `dbgauge`.`heartbeat`"]
    assert facts.reading is not None
    assert facts.reading.source == HeartbeatRow(1, 1700000000.0)  # not our own row
    assert (facts.reading.now, facts.reading.lag) == (1700000002.5, 2.5)
    assert [(s.name, s.value) for s in collector.samples(facts)] == [
        ("dbgauge_mysql_heartbeat_configured", 1.0),
        ("dbgauge_mysql_heartbeat_lag_seconds", 2.5),
        ("dbgauge_mysql_heartbeat_stored_timestamp_seconds", 1700000000.0),
        ("dbgauge_mysql_heartbeat_now_timestamp_seconds", 1700000002.5),
        ("dbgauge_mysql_heartbeat_source_server_id", 1.0)]
    ahead = MySQLHeartbeat(clock=lambda: 1699999999.0).read(conn)  # type: ignore[arg-type]
    assert ahead.reading is not None and ahead.reading.lag == 0.0  # writer's clock ahead
    writer = parse_config(config_file("{mode: write}")).all_targets()[0]
    own = collector.read(HeartbeatConnection("mariadb", (10, 11, 0), {  # type: ignore[arg-type]
        "heartbeat_read": rows}, target=writer))
    assert own.reading is not None and own.reading.source.server_id == 2
    missing = parse_config(config_file("{mode: read, source_server_id: 9}")).all_targets()[0]
    with pytest.raises(QueryError, match="no heartbeat row from server_id 9"):
        collector.read(HeartbeatConnection("mariadb", (10, 11, 0), {  # type: ignore[arg-type]
            "heartbeat_read": rows}, target=missing))
    assert collector.read(FixtureConnection(  # type: ignore[arg-type]
        "mariadb", (10, 11, 0), {}, target=parse_config(config_file()).all_targets()[0])
    ) == HeartbeatFacts(None)

