"""postgres_io on pg_stat_io rows captured from real PostgreSQL 16, 17 and 18 servers
(tests/fixtures/postgres-1{6,7,8}/stat_io-primary.json, capture_majors.py)."""

from __future__ import annotations

import pytest

from dbgauge.app import registry
from dbgauge.collectors.postgres_io import PostgresIo, parse_io
from dbgauge.toolkit.db import ServerInfo
from tests.helpers import as_dict, value
from tests.helpers.captured import FixtureConnection, json_rows

COLLECTOR = REGISTRY = registry()["postgres_io"]
IO = "dbgauge_postgres_io_"
CLIENT = {"backend_type": "client backend", "object": "relation", "context": "normal"}


def captured(major: int) -> list[dict[str, object]]:
    return json_rows(f"postgres-{major}/stat_io-primary.json", f"PostgreSQL {major}.")


@pytest.mark.parametrize("major", [16, 17, 18])
def test_every_row_of_the_view_with_its_labels(major: int) -> None:
    rows = captured(major)
    conn = FixtureConnection("postgres", (major, 0), {"stat_io": rows})
    samples = list(COLLECTOR.collect(conn))  # type: ignore[arg-type]
    assert conn.asked == ["stat_io"]
    for s in samples:
        COLLECTOR.validate_sample(s)
    m = as_dict("postgres_io", samples)
    client = next(r for r in rows if all(r[k] == v for k, v in CLIENT.items()))
    assert value(m, IO + "reads_total", **CLIENT) == client["reads"]
    assert value(m, IO + "hits_total", **CLIENT) == client["hits"] > 0
    assert value(m, IO + "read_bytes_total", **CLIENT) == client["read_bytes"]
    if major < 18:  # one block per operation, computed by the statement
        assert client["read_bytes"] == client["reads"] * 8192
    else:  # 18 combines reads: an operation may cover several blocks
        assert client["read_bytes"] > client["reads"] * 8192
    # track_io_timing was on: relation times are there, in seconds
    assert value(m, IO + "read_seconds_total", **CLIENT) == pytest.approx(
        client["read_time"] / 1000)
    # a NULL (an operation that cannot happen there) is no series: e.g. no hits on WAL,
    # no fsyncs in bulkread
    labelled = {(s.labels["backend_type"], s.labels["object"], s.labels["context"])
                for s in samples if s.name == IO + "fsyncs_total"}
    for r in rows:
        key = (r["backend_type"], r["object"], r["context"])
        assert (key in labelled) == (r["fsyncs"] is not None), key


def test_pg18_wal_rows_have_no_times_while_track_wal_io_timing_is_off() -> None:
    rows = captured(18)
    facts = parse_io(rows)
    wal = [r for r in facts.rows if r.object == "wal"]
    assert wal and not any(r.timed for r in wal)
    assert all(r.timed for r in facts.rows if r.object != "wal")
    m = as_dict("postgres_io", COLLECTOR.samples(facts))
    assert not [k for k in m if k[0].endswith("_seconds_total") and ("object", "wal") in k[1]]
    written = next(r for r in rows if r["object"] == "wal" and r["writes"])
    labels = {k: str(written[k]) for k in ("backend_type", "object", "context")}
    assert value(m, IO + "write_bytes_total", **labels) == written["write_bytes"] > 0


def test_times_are_left_out_when_timing_is_off() -> None:
    row = {**captured(16)[0], "io_timing": False, "read_time": 0.0}
    m = as_dict("postgres_io", COLLECTOR.samples(parse_io([row])))
    assert m and not [k for k in m if k[0].endswith("_seconds_total")]


def test_runs_on_16_and_later_only() -> None:
    assert isinstance(COLLECTOR, PostgresIo) and COLLECTOR.default_enabled
    for major, runs in ((13, False), (15, False), (16, True), (18, True)):
        assert COLLECTOR.supports(ServerInfo("postgres", (major, 0), f"{major}.0")) is runs
