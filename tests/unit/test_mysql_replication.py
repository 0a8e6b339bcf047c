"""mysql_replication on captured output: both column namings (MySQL 8.0 SHOW REPLICA STATUS,
MariaDB 10.11 SHOW ALL SLAVES STATUS), NULL lag, GTID arithmetic, statement choice."""

from __future__ import annotations

import pytest

from dbgauge.app import registry
from dbgauge.collectors.mysql_replication import (
    MySQLReplication,
    ReplicationFacts,
    ReplicationFlags,
    channel_samples,
    gtid_subtract_count,
    parse_flags,
    parse_replica_status,
)
from dbgauge.toolkit.gtid import MariaGtid, parse_gtid_set, parse_mariadb_gtids
from dbgauge.toolkit.sql import load_sql
from tests.helpers.captured import FixtureConnection, table_rows, vertical_rows

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
    assert parse_mariadb_gtids("0-1-504,1-2-30") == (MariaGtid(0, 1, 504), MariaGtid(1, 2, 30))
    assert parse_mariadb_gtids("") == ()


def test_mariadb_backlog_is_counted_per_domain() -> None:
    """Gtid_IO_Pos minus Gtid_Slave_Pos by the highest seq of each domain both name."""
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")

    def pending(io_pos: str, slave_pos: str) -> int | None:
        return parse_replica_status({**row, "Gtid_IO_Pos": io_pos,
                                     "Gtid_Slave_Pos": slave_pos}).gtid_pending

    assert pending("0-1-10,0-2-12,1-3-5", "0-1-9,1-3-2,2-1-1") == (12 - 9) + (5 - 2)
    assert pending("0-1-504,\n1-2-30", "0-1-500,1-2-30") == 4
    assert pending("0-1-5", "0-1-9") == 0  # never negative
    assert pending("", "0-1-1") is None  # not using GTIDs
    assert pending("5-1-3", "0-1-1") is None  # no domain in common
    assert pending("0-1-5,junk,0-x-9", "0-1-4") == 1  # malformed items are skipped


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
    # read_only and the dump-thread count have no MySQL 8 capture: the channels are read
    # first, then the flags
    with pytest.raises(AssertionError, match="no captured answer for replication_flags"):
        collector.read(conn)
    assert conn.asked == ["replica_status", "replication_flags"]
    channels = tuple(parse_replica_status(r)
                     for r in table_rows("mysql-8.0/show_replica_status.txt"))
    samples = list(collector.samples(ReplicationFacts(channels, ReplicationFlags())))
    for sample in samples:
        collector.validate_sample(sample)
    values = {(s.name, s.labels.get("channel")): s.value for s in samples}
    assert values[("dbgauge_mysql_replication_configured", None)] == 1
    for channel in ("master1", "master2"):
        assert values[("dbgauge_mysql_replica_io_running", channel)] == 1
        assert values[("dbgauge_mysql_replica_seconds_behind_source_unknown", channel)] == 0
    assert values[("dbgauge_mysql_replica_source_server_id", "master2")] == 2
    assert not any(name == "dbgauge_mysql_read_only" for name, _ in values)  # no flags read


def test_read_returns_channels_and_flags_and_samples_follow() -> None:
    """The read/samples contract: read() runs the two statements and returns facts (where
    each channel replicates from included, for the split-brain check); samples() is pure."""
    rows = table_rows("mysql-8.0/show_replica_status.txt")
    conn = FixtureConnection("mysql", (8, 0, 30), {
        "replica_status": rows,
        "replication_flags": [{"read_only": 1, "super_read_only": 0, "replicas": 2}]})
    collector = MySQLReplication()
    facts = collector.read(conn)
    assert conn.asked == ["replica_status", "replication_flags"]
    assert [c.channel for c in facts.channels] == ["master1", "master2"]
    first = facts.channels[0]
    assert (first.source_host, first.source_port) == (rows[0]["Source_Host"],
                                                      int(rows[0]["Source_Port"]))
    assert first.source_uuid == rows[0]["Master_UUID"].lower() != ""  # 8.0 keeps this name
    assert first.last_io_error == "" and first.last_sql_error == ""
    assert facts.flags == ReplicationFlags(read_only=1, super_read_only=0, connected_replicas=2)
    assert not facts.flags.writable
    values = {(s.name, s.labels.get("channel")): s.value for s in collector.samples(facts)}
    assert values[("dbgauge_mysql_read_only", None)] == 1
    assert values[("dbgauge_mysql_super_read_only", None)] == 0
    assert values[("dbgauge_mysql_connected_replicas", None)] == 2
    assert list(collector.samples(facts)) == list(collector.collect(FixtureConnection(
        "mysql", (8, 0, 30), dict(conn.answers))))  # type: ignore[arg-type]
    # MariaDB has no super_read_only: None, and no series for it
    maria = parse_flags({"read_only": 0, "replicas": 0})
    assert maria.super_read_only is None and maria.writable
    primary = ReplicationFacts((), maria)
    names = {s.name: s.value for s in collector.samples(primary)}
    assert names == {"dbgauge_mysql_replication_configured": 0, "dbgauge_mysql_read_only": 0,
                     "dbgauge_mysql_connected_replicas": 0}


def test_mariadb_channel_keeps_errors_and_source() -> None:
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    broken = {**row, "Last_SQL_Errno": "1950", "Last_SQL_Error": " out-of-order sequence "}
    st = parse_replica_status(broken)
    assert st.last_sql_error == "out-of-order sequence" and st.last_sql_errno == 1950
    assert st.source_host == row["Master_Host"] and st.source_port == int(row["Master_Port"])
    assert st.source_uuid == ""  # MariaDB reports no source UUID
