"""Split-brain analysis without servers: binlog events and states captured from the MariaDB
sandbox, the MySQL 8.0.30 multi-source fixture, and CONSTRUCTED node snapshots for the
topologies no single sandbox can show (MySQL 8 servers, two clusters, diverged timelines).
The same code runs against the real sandbox in tests/integration/test_split_brain.py."""

from __future__ import annotations

from dbgauge.checks.split_brain.binlog import (
    _header_state,
    event_gtid,
    parse_event,
    parse_event_header,
    summarize_transaction,
)
from dbgauge.checks.split_brain.heartbeats import advancing, heartbeat_findings
from dbgauge.checks.split_brain.model import (
    ERRANT,
    HEARTBEAT,
    PRIMARIES,
    TIMELINE,
    WRITABLE_REPLICA,
    BinlogEvent,
    Channel,
    Errant,
    ErrantEvents,
    MySQLNode,
    PgNode,
)
from dbgauge.checks.split_brain.mysql import errant_finding, find_errant, mysql_findings, topologies
from dbgauge.checks.split_brain.postgres import format_lsn, parse_lsn, pg_findings
from dbgauge.checks.split_brain.reads import mysql_node
from dbgauge.collectors.mysql_replication import parse_flags, parse_replica_status
from dbgauge.toolkit.gtid import GtidSet
from dbgauge.toolkit.heartbeat import HeartbeatRow
from dbgauge.toolkit.result import Status
from tests.helpers.captured import load, table_rows, tsv_rows

U1 = "61221e31-1ef3-11ed-a56a-0242ac120002"  # from the MySQL 8.0.30 fixture
U2 = "6151d979-1ef3-11ed-a509-0242ac120003"
U3 = "00000000-0000-0000-0000-0000000000c3"  # CONSTRUCTED: a replica's own UUID


def events(name: str) -> list[BinlogEvent]:
    return [parse_event(r) for r in tsv_rows(f"gtid/{name}")]


# ----------------------------------------------------------------------------- binlog

def test_gtid_events_and_first_errant_transaction_from_the_sandbox() -> None:
    evs = events("mariadb-10.11-replica-binlog-events.tsv")
    gtids = [g for g in (event_gtid(e) for e in evs) if g]
    assert gtids == ["0-1-6", "0-1-7", "0-2-8", "0-2-9"]
    replica, primary = tsv_rows("gtid/mariadb-10.11-gtid-state.tsv")
    node = MySQLNode("replica", ("127.0.0.1", 2), "mariadb", 2, True,
                     (Channel("", "127.0.0.1", 1, 1, ""),),
                     binlog_state=replica["gtid_binlog_state"], slave_pos="0-1-7")
    source = MySQLNode("primary", ("127.0.0.1", 1), "mariadb", 1, True,
                       binlog_state=primary["gtid_binlog_state"])
    errant = find_errant(node, [node, source], {"primary": source})
    assert [g for g in gtids if errant.is_errant(g)] == ["0-2-8", "0-2-9"]
    first = next(i for i, e in enumerate(evs) if event_gtid(e) == "0-2-8")
    body = evs[first + 1:first + 5]
    assert summarize_transaction(body) == \
        "insert into app.sb_errant values (1,'written on the replica')"
    ddl = evs[first + 6:]
    assert summarize_transaction(ddl) == "create table app.sb_errant_ddl(id int primary key)"
    # The first file starts empty; the next one's Gtid_list already holds the errant GTIDs.
    assert _header_state(evs[:3]) == "" and not errant.before_file("")
    head = events("mariadb-10.11-replica-binlog-next-file-head.tsv")
    assert _header_state(head) == "0-1-7,0-2-9" and errant.before_file("0-1-7,0-2-9")


def test_binlog_event_header_from_the_sandbox() -> None:
    _, text = load("gtid/mariadb-10.11-gtid-event-header.txt")
    timestamp, type_code, server_id = parse_event_header(bytes.fromhex(text.strip()))
    assert (type_code, server_id) == (162, 2)  # GTID_EVENT written by server_id 2
    assert timestamp == 1795356336  # 2026-11-22T14:05:36Z


def test_mysql_gtid_event_and_row_summary() -> None:
    # CONSTRUCTED in the format of MySQL 8.0 SHOW BINLOG EVENTS Info columns.
    gtid = BinlogEvent("binlog.000003", 197, "Gtid", 119, 276,
                       f"SET @@SESSION.GTID_NEXT= '{U1}:16334'")
    assert event_gtid(gtid) == f"{U1}:16334"
    body = [BinlogEvent("binlog.000003", 276, "Query", 119, 350, "BEGIN"),
            BinlogEvent("binlog.000003", 350, "Table_map", 119, 399, "table_id: 625 (rep.txx)"),
            BinlogEvent("binlog.000003", 399, "Delete_rows", 119, 443,
                        "table_id: 625 flags: STMT_END_F"),
            BinlogEvent("binlog.000003", 443, "Xid", 119, 474, "COMMIT /* xid=6660 */")]
    assert summarize_transaction(body) == "delete rows in rep.txx"
    assert event_gtid(body[0]) is None


# ----------------------------------------------------------------------------- MySQL family

def _mysql(name: str, port: int, *, uuid: str, executed: str, writable: bool = False,
           channels: tuple[Channel, ...] = ()) -> MySQLNode:
    return MySQLNode(name, ("10.0.0.1", port), "mysql", port, writable, channels,
                     server_uuid=uuid, gtid_executed=executed)


def test_multi_source_replica_against_both_sources() -> None:
    first, second = table_rows("mysql-8.0/show_replica_status.txt")
    m1 = _mysql("master1", 1, uuid=U1, executed=f"{U1}:1-3", writable=True)
    m2 = _mysql("master2", 2, uuid=U2, executed=f"{U2}:1-3", writable=True)
    replica = mysql_node("replica", ("10.0.0.9", 3306), "mysql",
                         {"server_id": 9, "server_uuid": U3,
                          "gtid_executed": first["Executed_Gtid_Set"]},
                         parse_flags({"read_only": 1, "super_read_only": 1}),
                         [parse_replica_status(first), parse_replica_status(second)])
    # The fixture's channels name their sources by host; give the nodes those addresses.
    m1 = MySQLNode(**{**m1.__dict__, "address": ("mysql-master1", 3306)})
    m2 = MySQLNode(**{**m2.__dict__, "address": ("mysql-master2", 3306)})
    nodes = [m1, m2, replica]
    assert not find_errant(replica, nodes, {})
    # A source that lost a transaction the replica has (e.g. a crash with sync_binlog=0):
    lost = MySQLNode(**{**m2.__dict__, "gtid_executed": f"{U2}:1-2"})
    errant = find_errant(replica, nodes, {"master2": lost})
    assert str(errant.mysql) == f"{U2}:3"
    finding = errant_finding(errant, nodes)
    assert finding.severity is Status.CRITICAL and finding.kind == ERRANT
    assert f"{U2}:3" in finding.detail and "master1, master2" in finding.detail
    assert finding.evidence["written_by"] == f"server_uuid {U2} = master2"
    assert f"GTID_NEXT='{U2}:3'" in (finding.fix or "")


def test_reading_the_replica_first_avoids_a_false_positive() -> None:
    channel = (Channel("", "10.0.0.1", 1, 1, U1),)
    source = _mysql("source", 1, uuid=U1, executed=f"{U1}:1-8", writable=True)
    replica = _mysql("replica", 2, uuid=U3, executed=f"{U1}:1-10", channels=channel)
    # The source kept writing: read after the replica it has 1-12, nothing is errant.
    assert not find_errant(replica, [source, replica],
                           {"source": MySQLNode(**{**source.__dict__,
                                                   "gtid_executed": f"{U1}:1-12"})})
    # Compared with an older read of the source, 9-10 would look errant.
    assert str(find_errant(replica, [source, replica], {}).mysql) == f"{U1}:9-10"


def test_local_writes_without_the_source_are_a_warning() -> None:
    channel = (Channel("", "10.9.9.9", 3306, 77, ""),)
    replica = _mysql("replica", 2, uuid=U3, executed=f"{U1}:1-10,{U3}:1-2", channels=channel)
    errant = find_errant(replica, [replica], {})
    assert not errant.against_sources and str(errant.mysql) == f"{U3}:1-2"
    finding = errant_finding(errant, [replica])
    assert finding.severity is Status.WARNING and "own server_uuid" in finding.detail


def test_primaries_writable_replicas_and_separate_topologies() -> None:
    a = _mysql("a", 1, uuid=U1, executed=f"{U1}:1-50", writable=True)
    # b was promoted from a replica of a: shares a's history, writable, replicates from no one
    b = _mysql("b", 2, uuid=U2, executed=f"{U1}:1-40,{U2}:1-3", writable=True)
    # c replicates from a and is writable
    c = _mysql("c", 3, uuid=U3, executed=f"{U1}:1-50", writable=True,
               channels=(Channel("", "10.0.0.1", 1, 1, U1),))
    # d is another cluster's primary: no shared history, no link
    d = _mysql("d", 4, uuid="00000000-0000-0000-0000-0000000000d4",
               executed="00000000-0000-0000-0000-0000000000d4:1-9", writable=True)
    assert sorted(sorted(n.name for n in g) for g in topologies([a, b, c, d])) == \
        [["a", "b", "c"], ["d"]]
    found = mysql_findings([a, b, c, d], [], {})
    kinds = sorted((f.kind, f.node, f.severity.name) for f in found)
    assert kinds == [(PRIMARIES, "a", "CRITICAL"), (PRIMARIES, "b", "CRITICAL"),
                     (WRITABLE_REPLICA, "c", "WARNING")]


def test_mariadb_errant_finding_lists_binlog_evidence() -> None:
    replica = MySQLNode("replica", ("h", 2), "mariadb", 2, False,
                        (Channel("", "h", 1, 1, ""),), binlog_state="0-1-7,0-2-9",
                        slave_pos="0-1-7")
    source = MySQLNode("primary", ("h", 1), "mariadb", 1, True, binlog_state="0-1-8")
    errant = find_errant(replica, [replica, source], {"primary": source})
    first = BinlogEvent("mariadb-bin.000001", 738, "Gtid", 2, 780, "BEGIN GTID 0-2-8")
    found = errant_finding(errant, [replica, source],
                           ErrantEvents(("0-2-8", "0-2-9"), first, "insert into t"))
    assert found.detail == ("2 errant transaction(s) its source primary does not have: "
                            "0-2-8, 0-2-9")
    assert found.evidence["first_errant_event"] == "mariadb-bin.000001:738"
    assert found.evidence["written_by"] == "server_id 2 in domain 0 = this replica"
    assert "SET GLOBAL gtid_slave_pos='0-1-7'" in (found.fix or "")
    # No readable binlog: the last GTID per server, said to be incomplete.
    bare = errant_finding(errant, [replica, source], None)
    assert "0-2-9" in bare.detail and "not readable" in bare.detail
    assert isinstance(errant, Errant) and errant.text() == "0-2-9"


# ----------------------------------------------------------------------------- PostgreSQL

def _pg(name: str, *, sysid: str = "7710994363268046771", standby: bool = False,
        timeline: int = 1, wal: str = "0/3000000", replay: str | None = None,
        sender: tuple[str, int] | None = None) -> PgNode:
    return PgNode(name, ("127.0.0.1", {"p": 5432, "s": 5433}.get(name[0], 6000)), sysid,
                  standby, timeline, parse_lsn(wal), parse_lsn(replay), sender)


def test_lsn_round_trip() -> None:
    assert parse_lsn("16/B374D848") == 0x16B374D848
    assert format_lsn(0x16B374D848) == "16/B374D848"
    assert parse_lsn(None) is None and parse_lsn("junk/zz") is None


def test_two_postgres_primaries_of_one_system() -> None:
    primary, promoted = _pg("primary"), _pg("standby", timeline=2)
    other = _pg("other", sysid="1234")
    found = pg_findings([primary, promoted, other], {})
    assert sorted((f.kind, f.node) for f in found) == [(PRIMARIES, "primary"),
                                                        (PRIMARIES, "standby")]
    assert all(f.severity is Status.CRITICAL for f in found)
    assert "timeline 2" in next(f.detail for f in found if f.node == "primary")


def test_standby_timeline_and_position_divergence() -> None:
    primary = _pg("primary", timeline=3, wal="0/5000000")
    healthy = _pg("standby", standby=True, timeline=3, replay="0/4FFFFFF",
                  sender=("127.0.0.1", 5432))
    assert not pg_findings([primary, healthy], {})
    old_tl = _pg("standby", standby=True, timeline=2, replay="0/4000000",
                 sender=("127.0.0.1", 5432))
    (found,) = pg_findings([primary, old_tl], {})
    assert found.kind == TIMELINE and "timeline 2" in found.detail
    ahead = _pg("standby", standby=True, timeline=3, replay="0/6000000",
                sender=("127.0.0.1", 5432))
    # Upstream read after the standby: still behind the standby's replay -> diverged.
    (found,) = pg_findings([primary, ahead], {"primary": primary})
    assert found.kind == TIMELINE and "0/6000000" in found.detail
    caught_up = PgNode(**{**primary.__dict__, "wal_lsn": parse_lsn("0/7000000")})
    assert not pg_findings([primary, ahead], {"primary": caught_up})


# ----------------------------------------------------------------------------- heartbeats

def test_concurrent_heartbeat_writers() -> None:
    before = [HeartbeatRow(1, 100.0), HeartbeatRow(2, 50.0), HeartbeatRow(3, 10.0)]
    after = [HeartbeatRow(1, 102.0), HeartbeatRow(2, 52.0), HeartbeatRow(3, 10.0),
             HeartbeatRow(4, 1.0)]
    assert advancing(before, after) == {1, 2}
    a = _mysql("a", 1, uuid=U1, executed=f"{U1}:1-5", writable=True)
    b = _mysql("b", 2, uuid=U2, executed=f"{U1}:1-5")
    found = heartbeat_findings([[a, b]], {"a": frozenset({1}), "b": frozenset({1, 2})})
    assert sorted(f.node for f in found) == ["a", "b"]
    assert all(f.kind == HEARTBEAT and "1 (a), 2 (b)" in f.detail for f in found)
    assert not heartbeat_findings([[a, b]], {"a": frozenset({1}), "b": frozenset({1})})


def test_gtid_of_constructed_nodes_is_a_set() -> None:
    node = _mysql("x", 1, uuid=U1, executed=f"{U1}:1-3:5")
    assert node.gtids == GtidSet.parse(f"{U1}:1-3,{U1}:5") and node.history() == {U1}
