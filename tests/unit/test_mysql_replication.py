"""mysql_replication on captured output: both column namings (MySQL 8.0 SHOW REPLICA STATUS,
MariaDB 10.11 SHOW ALL SLAVES STATUS), NULL lag, GTID arithmetic, statement choice."""

from __future__ import annotations

import pytest

from collectors.mysql_replication import (
    channel_samples,
    gtid_subtract_count,
    parse_mariadb_gtid_pos,
    parse_replica_status,
)
from tests.unit.test_mysql_fixtures import FixtureConnection, table_rows, vertical_rows
from toolkit.app import registry
from toolkit.gtid import parse_gtid_set
from toolkit.sql import load_sql

REGISTRY = registry()


def test_mysql_80_multi_source_source_replica_names() -> None:
    rows = table_rows("mysql-8.0/show_replica_status.txt")
    first, second = (parse_replica_status(r) for r in rows)
    assert (first.channel, second.channel) == ("master1", "master2")
    assert first.io_running and first.sql_running
    assert first.seconds_behind == 0
    assert (first.source_server_id, second.source_server_id) == (1, 2)
    assert (first.relay_log_space, second.relay_log_space) == (1599, 1598)
    assert first.sql_delay == 0 and first.last_io_errno == 0 and first.last_sql_errno == 0
    # Retrieved 61221e31:1-3 is inside Executed (both sources' 1-3): nothing pending
    assert first.gtid_pending == 0 and second.gtid_pending == 0


def test_mariadb_1011_master_slave_names() -> None:
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    st = parse_replica_status(row)
    assert st.channel == ""
    assert st.io_running and st.sql_running
    assert st.seconds_behind == 0
    assert st.source_server_id == 1
    assert st.gtid_pending == 0
    assert st.relay_log_space == float(row["Relay_Log_Space"])


def test_mariadb_sql_thread_stopped_null_lag_and_backlog() -> None:
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status_sql_stopped.txt")
    st = parse_replica_status(row)
    assert row["Seconds_Behind_Master"] is None
    assert st.io_running and not st.sql_running
    assert st.seconds_behind is None
    assert st.gtid_pending == 3  # Gtid_IO_Pos 0-1-547, Gtid_Slave_Pos 0-1-544
    samples = {s.name: s.value for s in channel_samples(st)}
    assert samples["dbgauge_mysql_replica_seconds_behind_source_unknown"] == 1
    assert "dbgauge_mysql_replica_seconds_behind_source" not in samples
    assert samples["dbgauge_mysql_replica_sql_running"] == 0
    assert samples["dbgauge_mysql_replica_gtid_pending_transactions"] == 3


def test_connecting_io_thread_is_not_running() -> None:
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    row = {**row, "Slave_IO_Running": "Connecting", "Seconds_Behind_Master": None}
    st = parse_replica_status(row)
    assert st.io_thread == "Connecting" and not st.io_running


def test_gtid_set_arithmetic() -> None:
    a = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18,\n" \
        "2174b383-5441-11e8-b90a-c80aa9429562:1-3"
    assert parse_gtid_set(a) == {
        ("3e11fa47-71ca-11e1-9e33-c80aa9429562", ""): [(1, 5), (11, 18)],
        ("2174b383-5441-11e8-b90a-c80aa9429562", ""): [(1, 3)],
    }
    assert gtid_subtract_count(a, "") == 5 + 8 + 3
    assert gtid_subtract_count(a, a) == 0
    assert gtid_subtract_count(a, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-14") == 4 + 3
    # MySQL 8.3+ tagged GTIDs: a tag applies to the intervals after it
    tagged = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1-10:ops:1-2"
    assert gtid_subtract_count(tagged, "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1-10") == 2
    assert parse_mariadb_gtid_pos("0-1-504,1-2-30") == {0: 504, 1: 30}
    assert parse_mariadb_gtid_pos("") == {}


@pytest.mark.parametrize(("flavor", "version", "statement"), [
    ("mysql", (8, 0, 21), "SHOW SLAVE STATUS"),
    ("mysql", (8, 0, 22), "SHOW REPLICA STATUS"),
    ("mysql", (8, 4, 3), "SHOW REPLICA STATUS"),
    ("mariadb", (10, 6, 0), "SHOW ALL SLAVES STATUS"),
    ("mariadb", (11, 4, 2), "SHOW ALL SLAVES STATUS"),
])
def test_statement_follows_flavor_and_version(flavor: str, version: tuple[int, ...],
                                              statement: str) -> None:
    assert load_sql(flavor, "replica_status", version) == statement


def test_flags_statement_per_flavor() -> None:
    mysql = load_sql("mysql", "replication_flags", (8, 4, 0))
    assert "super_read_only" in mysql and "performance_schema.threads" in mysql
    mariadb = load_sql("mariadb", "replication_flags", (10, 11, 0))
    assert "super_read_only" not in mariadb and "PROCESSLIST" in mariadb


def test_collector_on_mysql_80_multi_source() -> None:
    conn = FixtureConnection("mysql", (8, 0, 30), {
        "replica_status": table_rows("mysql-8.0/show_replica_status.txt"),
    })
    collector = REGISTRY["mysql_replication"]
    samples = []
    # read_only and the dump-thread count have no MySQL 8 capture: the channel part must be
    # complete by the time the collector asks for them
    with pytest.raises(AssertionError, match="no captured answer for replication_flags"):
        for sample in collector.collect(conn):  # type: ignore[arg-type]
            collector.validate_sample(sample)
            samples.append(sample)
    assert conn.asked == ["replica_status", "replication_flags"]
    values = {(s.name, s.labels.get("channel")): s.value for s in samples}
    assert values[("dbgauge_mysql_replication_configured", None)] == 1
    for channel in ("master1", "master2"):
        assert values[("dbgauge_mysql_replica_io_running", channel)] == 1
        assert values[("dbgauge_mysql_replica_seconds_behind_source_unknown", channel)] == 0
    assert values[("dbgauge_mysql_replica_source_server_id", "master2")] == 2
