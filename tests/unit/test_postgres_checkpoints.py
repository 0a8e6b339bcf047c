"""postgres_checkpoints on a row captured from the sandbox's PostgreSQL 15: counters in base
units, archiver ages, NULLs."""

from __future__ import annotations

import pytest

from dbgauge.app import registry
from dbgauge.collectors.postgres_checkpoints import age, parse_checkpoints
from tests.helpers import as_dict, value
from tests.helpers.captured import json_rows

REGISTRY = registry()
P = "dbgauge_postgres_"
# captured from the sandbox's PostgreSQL 15 by capture_coverage.py (in that fixture folder)
CAPTURED, PG15 = "postgres-15/coverage-", "PostgreSQL 15"


def test_checkpoint_row_pg15_has_everything_in_base_units() -> None:
    row = json_rows(CAPTURED + "checkpoints.json", PG15)[0]
    m = as_dict("postgres_checkpoints",
                REGISTRY["postgres_checkpoints"].samples(parse_checkpoints(row)))
    declared = {s.name for s in REGISTRY["postgres_checkpoints"].metrics}
    # archiving on and once failed: all there but the WAL files (another statement) and
    # the restartpoints (PostgreSQL 17+)
    assert {name for name, _ in m} == declared - {P + "wal_segments", P + "wal_size_bytes"} - {
        P + f"restartpoints_{n}_total" for n in ("timed", "requested", "done")}
    assert value(m, P + "checkpoint_write_seconds_total") == pytest.approx(
        row["checkpoint_write_time"] / 1000)
    assert value(m, P + "wal_bytes_total") == row["wal_bytes"]
    assert value(m, P + "archiver_enabled") == 1


def test_checkpoint_nulls_and_ages() -> None:
    facts = parse_checkpoints({"checkpoints_timed": None, "wal_bytes": "123",
                               "last_archived_age": -0.0004, "last_failed_age": None,
                               "archive_mode": "always"})
    m = as_dict("postgres_checkpoints", REGISTRY["postgres_checkpoints"].samples(facts))
    assert m == {(P + "wal_bytes_total", frozenset()): 123.0,
                 (P + "archiver_last_archived_age_seconds", frozenset()): 0.0,
                 (P + "archiver_enabled", frozenset()): 1.0}
    assert age(None) is None and age(5) == 5.0 and age(-1e-6) == 0.0


def test_wal_files_come_from_their_own_statement() -> None:
    from dataclasses import replace

    from tests.helpers.captured import Answers

    row = json_rows(CAPTURED + "checkpoints.json", PG15)[0]
    conn = Answers({"checkpoints": [row],
                    "wal_files": [{"wal_segments": 3, "wal_size_bytes": 3 * 16 * 2 ** 20}]})
    facts = REGISTRY["postgres_checkpoints"].read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["wal_files", "checkpoints"]
    assert facts == replace(parse_checkpoints(row), wal_segments=3,
                            wal_size_bytes=3 * 16 * 2 ** 20)
    m = as_dict("postgres_checkpoints", REGISTRY["postgres_checkpoints"].samples(facts))
    assert value(m, P + "wal_segments") == 3
    assert value(m, P + "wal_size_bytes") == 48 * 2 ** 20
