"""postgres_wal_receiver and postgres_exporter's pg_stat_wal_receiver_* families made from it,
on the row captured from the sandbox's PostgreSQL 15 standby (tests/fixtures/postgres-15/
wal_receiver-standby.json, statement wal_receiver.sql, written by capture_activity.py), and
on rows with a repmgr slot and with NULLs, written from the documentation of
pg_stat_wal_receiver. Expected values are
upstream's (collector/pg_stat_walreceiver.go at postgres_exporter dbb1987).
"""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.collectors.postgres_wal_receiver import PostgresWalReceiver, parse_wal_receiver
from dbgauge.toolkit.errors import NotVisible
from tests.helpers import as_dict
from tests.helpers.captured import json_rows
from tests.unit.test_dialect_postgres import translate

LABELS = frozenset({("upstream_host", "127.0.0.1"), ("slot_name", "pg_standby"),
                    ("status", "streaming")})


def captured() -> list[dict[str, Any]]:
    return [dict(r) for r in json_rows("postgres-15/wal_receiver-standby.json",
                                       "PostgreSQL 15")]


def test_a_streaming_standby_as_the_peer_reads_it() -> None:
    peer = translate("postgres_wal_receiver", parse_wal_receiver(captured()))
    assert peer == {(f"pg_stat_wal_receiver_{name}", LABELS): v for name, v in (
        ("receive_start_lsn", 83886080), ("flushed_lsn", 100663456), ("receive_start_tli", 1),
        ("received_tli", 1), ("last_msg_send_time", 1795937554.650768),
        ("last_msg_receipt_time", 1795937554.662041), ("latest_end_lsn", 100663456),
        ("latest_end_time", 1795937554.625959))}
    ours = as_dict("postgres_wal_receiver",
                   PostgresWalReceiver().samples(parse_wal_receiver(captured())))
    ours_labels = LABELS - {("status", "streaming")}
    assert ours[("dbgauge_postgres_wal_receiver_flushed_lsn_bytes", ours_labels)] == 100663456
    assert ours[("dbgauge_postgres_wal_receiver_start_timeline", ours_labels)] == 1
    assert len(ours) == 8


def test_a_repmgr_slot_names_the_upstream_node() -> None:
    row = {**captured()[0], "slot_name": "repmgr_slot_2", "upstream_node": "2"}
    peer = translate("postgres_wal_receiver", parse_wal_receiver([row]))
    labels = LABELS - {("slot_name", "pg_standby")} | {("slot_name", "repmgr_slot_2")}
    assert peer[("pg_stat_wal_receiver_upstream_node", labels)] == 2


@pytest.mark.parametrize("column", ["upstream_host", "slot_name", "latest_end_time"])
def test_a_null_the_peer_needs_leaves_the_row_out(column: str) -> None:
    """A receiver whose conninfo names no host= (a socket by default) is such a row."""
    row = {**captured()[0], column: None}
    assert translate("postgres_wal_receiver", parse_wal_receiver([row])) == {}


def test_a_primary_has_no_receiver_and_a_hidden_one_fails() -> None:
    assert translate("postgres_wal_receiver", parse_wal_receiver([])) == {}
    assert list(PostgresWalReceiver().samples(parse_wal_receiver([]))) == []
    hidden = parse_wal_receiver([{"hidden": True, "role": "mon", "status": None}])
    assert translate("postgres_wal_receiver", hidden) == {}
    with pytest.raises(NotVisible, match="WAL receiver"):
        list(PostgresWalReceiver().samples(hidden))
