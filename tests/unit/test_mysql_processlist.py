"""mysql_processlist: commands and states normalised to bounded sets, groups added up, the
statement by version."""

from __future__ import annotations

import pytest

from dbgauge.collectors.mysql_processlist import (
    normalise_command,
    normalise_state,
    parse_processlist,
)
from tests.helpers.captured import FixtureConnection


@pytest.mark.parametrize(("command", "state", "expected"), [
    ("Sleep", "", "idle"),
    ("Query", "Sending data", "sending_data"),
    ("Query", "Waiting for table metadata lock", "waiting_for_lock"),
    ("Query", "System lock", "waiting_for_lock"),
    ("Query", "query end", "end"),
    ("Query", "Filling schema table", "executing"),
    ("Binlog Dump", "Master has sent all binlog to slave; waiting for more updates",
     "replication_source"),
    ("Binlog Dump GTID", "Source has sent all binlog to replica", "replication_source"),
    ("Slave_SQL", "Slave has read all relay log; waiting for more updates",
     "replication_replica"),
    ("Daemon", "Waiting on empty queue", "other"),
    ("Connect", "copy to tmp table", "copying_to_tmp_table"),
])
def test_states_normalise_to_a_bounded_set(command: str, state: str, expected: str) -> None:
    assert normalise_state(command, state) == expected


def test_processlist_groups_add_up_with_bounded_commands() -> None:
    assert normalise_command("Binlog Dump GTID") == "binlog_dump_gtid"
    assert normalise_command("Something new") == "other"
    facts = parse_processlist([
        {"command": "Sleep", "state": "", "threads": 3, "longest": 40},
        {"command": "Sleep", "state": None, "threads": 1, "longest": 2},
        {"command": "Query", "state": "Sending data", "threads": 2, "longest": 5},
        {"command": "Query", "state": "Waiting for table metadata lock", "threads": 1,
         "longest": 70},
        {"command": "Query", "state": "System lock", "threads": 1, "longest": None},
    ])
    assert facts.threads == {("sleep", "idle"): 4.0, ("query", "sending_data"): 2.0,
                             ("query", "waiting_for_lock"): 2.0}
    assert facts.longest == {"sleep": 40.0, "query": 70.0}


def test_processlist_statement_by_version() -> None:
    assert "performance_schema.processlist" in FixtureConnection(
        "mysql", (8, 0, 22), {}).sql("processlist_summary")
    assert "information_schema.PROCESSLIST" in FixtureConnection(
        "mysql", (8, 0, 21), {}).sql("processlist_summary")
    assert "information_schema.PROCESSLIST" in FixtureConnection(
        "mariadb", (10, 11, 19), {}).sql("processlist_summary")
