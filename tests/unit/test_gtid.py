"""GTID arithmetic on captured values: the MySQL 8.4 manual's GTID_SUBTRACT/GTID_SUBSET
results, a MySQL 8.0.30 multi-source replica's gtid_executed, MariaDB 10.11 states from
the sandbox; plus a property test against Python's own set arithmetic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dbgauge.toolkit.gtid import (
    GtidSet,
    MariaGtid,
    errant_mariadb,
    local_mariadb_writes,
    mariadb_state,
    parse_mariadb_gtids,
)
from tests.helpers.captured import FIXTURES, load, table_rows, tsv_rows


def manual_examples() -> list[tuple[str, str, str, str]]:
    _, text = load("gtid/mysql-8.4-manual-gtid-functions.tsv")
    rows = [line.split("\t") for line in text.split("\n") if line]
    assert len(rows) == 7 and all(len(r) == 4 for r in rows)
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def test_gtid_subtract_matches_the_servers_results() -> None:
    subtract = [r for r in manual_examples() if r[0] == "GTID_SUBTRACT"]
    assert len(subtract) == 4
    for _, set1, set2, server in subtract:
        assert str(GtidSet.parse(set1) - GtidSet.parse(set2)) == server, (set1, set2)


def test_gtid_subset_matches_the_servers_results() -> None:
    subset = [r for r in manual_examples() if r[0] == "GTID_SUBSET"]
    assert [r[3] for r in subset] == ["1", "1", "0"]
    for _, set1, set2, server in subset:
        assert GtidSet.parse(set1).issubset(GtidSet.parse(set2)) is (server == "1")


def test_mysql_80_multi_source_replica_gtid_executed() -> None:
    # Both channels' rows carry the replica's gtid_executed: two source UUIDs, 1-3 each.
    first, second = table_rows("mysql-8.0/show_replica_status.txt")
    executed = GtidSet.parse(first["Executed_Gtid_Set"])
    assert executed == GtidSet.parse(second["Executed_Gtid_Set"])
    assert executed.uuids() == ("61221e31-1ef3-11ed-a56a-0242ac120002",
                                "6151d979-1ef3-11ed-a509-0242ac120003")
    assert len(executed) == 6
    assert str(executed) == first["Executed_Gtid_Set"]  # MySQL's own normal form
    retrieved = GtidSet.parse(first["Retrieved_Gtid_Set"]) | GtidSet.parse(
        second["Retrieved_Gtid_Set"])
    assert retrieved == executed and not executed - retrieved
    # Without master2's transactions, exactly master2's UUID range is left over.
    assert str(executed - GtidSet.parse(first["Retrieved_Gtid_Set"])) == \
        second["Retrieved_Gtid_Set"]
    assert "6151d979-1ef3-11ed-a509-0242ac120003:3" in executed
    assert "6151d979-1ef3-11ed-a509-0242ac120003:4" not in executed


def test_newlines_case_gaps_and_tags() -> None:
    # CONSTRUCTED from the documented syntax (MySQL prints ",\n" between UUIDs; 8.3+ tags).
    text = ("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11-18,\n"
            "3e11fa47-71ca-11e1-9e33-c80aa9429562:6:tag_a:1-2")
    gtids = GtidSet.parse(text)
    assert str(gtids) == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-6:11-18:tag_a:1-2"
    assert len(gtids) == 16
    assert "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag_a:2" in gtids
    assert "3e11fa47-71ca-11e1-9e33-c80aa9429562:7" not in gtids
    assert gtids.first() == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1"
    assert not GtidSet.parse("") and GtidSet.parse("").first() is None


def test_mariadb_errant_write_from_the_sandbox() -> None:
    replica, primary = tsv_rows("gtid/mariadb-10.11-gtid-state.tsv")
    assert replica["server_id"] == "2" and primary["server_id"] == "1"
    reference = mariadb_state(primary["gtid_binlog_state"], primary["gtid_slave_pos"])
    (errant,) = errant_mariadb(replica["gtid_binlog_state"], reference)
    assert str(errant.last) == "0-2-9" and errant.after == 0
    assert errant.covers(MariaGtid(0, 2, 8)) and not errant.covers(MariaGtid(0, 1, 8))
    # Without the source: the replica's own writes beyond its gtid_slave_pos.
    (local,) = local_mariadb_writes(replica["gtid_binlog_state"], replica["gtid_slave_pos"], 2)
    assert local == errant.__class__(MariaGtid(0, 2, 9), 7)
    # The primary itself has nothing errant against the replica's replicated state.
    assert not errant_mariadb(primary["gtid_binlog_state"],
                              mariadb_state(replica["gtid_binlog_state"], "0-1-8"))


def test_mariadb_positions_parse_and_skip_garbage() -> None:
    assert parse_mariadb_gtids("0-1-5,\n1-2-9, x, 3-4") == (MariaGtid(0, 1, 5),
                                                             MariaGtid(1, 2, 9))
    assert mariadb_state("0-1-5,0-2-3", "0-1-7") == {(0, 1): 7, (0, 2): 3}


@st.composite
def gtid_sets(draw: st.DrawFn) -> set[tuple[str, int]]:
    uuids = ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"]
    return {(u, n) for u in uuids for n in draw(st.sets(st.integers(1, 40), max_size=25))}


def _text(members: set[tuple[str, int]]) -> str:
    return ",".join(f"{u}:{n}" for u, n in sorted(members))


def _members(gtids: GtidSet) -> set[tuple[str, int]]:
    return {(u, n) for (u, _), intervals in gtids.members for a, b in intervals
            for n in range(a, b + 1)}


@given(gtid_sets(), gtid_sets())
def test_set_algebra_matches_python_sets(a: set[tuple[str, int]],
                                         b: set[tuple[str, int]]) -> None:
    ga, gb = GtidSet.parse(_text(a)), GtidSet.parse(_text(b))
    assert _members(ga - gb) == a - b
    assert _members(ga | gb) == a | b
    assert ga.issubset(gb) == (a <= b)
    assert len(ga) == len(a)
    assert GtidSet.parse(str(ga)) == ga  # the text form round-trips


def test_fixture_headers_name_version_and_statement() -> None:
    for path in sorted((FIXTURES / "gtid").iterdir()):
        header, _ = load(f"gtid/{path.name}")
        text = " ".join(header)
        assert "Server:" in text and ("Statement:" in text or "Source:" in text), path.name
        assert "Used by:" in text, path.name
