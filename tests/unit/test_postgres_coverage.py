"""The coverage collectors on rows captured from the sandbox's PostgreSQL 15
(tests/fixtures/postgres-15/coverage-*.json, made by capture_coverage.py there): parsing,
NULL handling, top-N limits reaching the statement, and the settings unit parser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.postgres_checkpoints import age, parse_checkpoints
from dbgauge.collectors.postgres_sequences import parse_sequences
from dbgauge.collectors.postgres_server import parse_server
from dbgauge.collectors.postgres_settings import (
    SETTINGS,
    PgSettingsFacts,
    parse_settings,
    parse_unit,
    setting_value,
)
from dbgauge.collectors.postgres_statements import PgStatementsFacts, parse_statements, preloaded
from dbgauge.collectors.postgres_tables import parse_facts
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.metrics import Sample
from tests.helpers.captured import Answers

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "postgres-15"
REGISTRY = registry()
P = "dbgauge_postgres_"


def rows(name: str) -> list[dict[str, Any]]:
    doc = json.loads((FIXTURES / f"coverage-{name}.json").read_text())
    assert doc["source"].startswith("PostgreSQL 15") and doc["statement"]
    return list(doc["rows"])


def checked(collector: str, samples: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Samples validated against the collector's specs, with no duplicate series."""
    c = REGISTRY[collector]
    out: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for s in samples:
        c.validate_sample(s)
        key = (s.name, frozenset(s.labels.items()))
        assert key not in out
        out[key] = s.value
    return out


def v(m: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
      **labels: str) -> float | None:
    return m.get((name, frozenset(labels.items())))


# ----------------------------------------------------------------- postgres_server


def test_server_rows() -> None:
    facts = parse_server(rows("server_databases"), rows("server_info")[0])
    m = checked("postgres_server", REGISTRY["postgres_server"].samples(facts))
    assert (v(m, P + "database_size_bytes", database="app") or 0) > 1_000_000
    assert v(m, P + "database_size_bytes", database="template0") is None  # no connections
    assert v(m, P + "database_xid_age", database="template0") is not None
    assert v(m, P + "autovacuum_freeze_max_age") == 200_000_000
    assert (v(m, P + "start_time_seconds") or 0) > 1.7e9


def test_server_nulls_give_no_samples() -> None:
    facts = parse_server([{"datname": "gone", "size_bytes": None, "xid_age": None,
                           "mxid_age": None}], {"start_time": None})
    assert list(REGISTRY["postgres_server"].samples(facts)) == []


# ----------------------------------------------------------------- postgres_checkpoints


def test_checkpoint_row_pg15_has_everything_in_base_units() -> None:
    row = rows("checkpoints")[0]
    m = checked("postgres_checkpoints",
                REGISTRY["postgres_checkpoints"].samples(parse_checkpoints(row)))
    declared = {s.name for s in REGISTRY["postgres_checkpoints"].metrics}
    assert {name for name, _ in m} == declared  # archiving on and once failed: all there
    assert v(m, P + "checkpoint_write_seconds_total") == pytest.approx(
        row["checkpoint_write_time"] / 1000)
    assert v(m, P + "wal_bytes_total") == row["wal_bytes"]
    assert v(m, P + "archiver_enabled") == 1


def test_checkpoint_nulls_and_ages() -> None:
    facts = parse_checkpoints({"checkpoints_timed": None, "wal_bytes": "123",
                               "last_archived_age": -0.0004, "last_failed_age": None,
                               "archive_mode": "always"})
    m = checked("postgres_checkpoints", REGISTRY["postgres_checkpoints"].samples(facts))
    assert m == {(P + "wal_bytes_total", frozenset()): 123.0,
                 (P + "archiver_last_archived_age_seconds", frozenset()): 0.0,
                 (P + "archiver_enabled", frozenset()): 1.0}
    assert age(None) is None and age(5) == 5.0 and age(-1e-6) == 0.0


# ----------------------------------------------------------------- postgres_statements


class StatementsConn:
    """Answers statements_extension, and records the composed statement and its limit."""

    def __init__(self, extension: list[dict[str, Any]], answer: list[dict[str, Any]]) -> None:
        self.server = ServerInfo("postgres", (15, 4), "15.4")
        self.extension = extension
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []

    def query(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        assert name == "statements_extension"
        return self.extension

    def execute_sql(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        self.sent.append((sql, params))
        return self.answer


def test_statements_rows_and_limit_reach_the_statement() -> None:
    collector = REGISTRY["postgres_statements"].configured({"limit": 5})
    conn = StatementsConn([{"schema": "monitoring", "preload": "pg_stat_statements"}],
                          rows("statements"))
    facts = collector.read(conn)
    ((sql, params),) = conn.sent
    assert 'FROM "monitoring".pg_stat_statements AS s' in sql and params == (5,)
    assert "query" not in sql.replace("queryid", "")  # never the text
    m = checked("postgres_statements", collector.samples(facts))
    first = rows("statements")[0]
    labels = {"queryid": first["queryid"], "database": "app", "user": first["username"]}
    assert v(m, P + "statements_calls_total", **labels) == first["calls"]
    assert v(m, P + "statements_seconds_total", **labels) == pytest.approx(
        first["total_exec_time"] / 1000)
    assert v(m, P + "statements_mean_seconds", **labels) == pytest.approx(
        first["total_exec_time"] / 1000 / first["calls"])
    assert len({ls for name, ls in m if name == P + "statements_calls_total"}) == 5
    assert v(m, P + "statements_configured") == 1


@pytest.mark.parametrize("extension", [
    [],  # not created in this database
    [{"schema": "public", "preload": "auto_explain"}],  # created, library not preloaded
])
def test_statements_unusable_is_configured_zero_not_an_error(
        extension: list[dict[str, Any]]) -> None:
    conn = StatementsConn(extension, [])
    collector = REGISTRY["postgres_statements"]
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    assert samples == [Sample(P + "statements_configured", 0.0)] and conn.sent == []


def test_statement_nulls() -> None:
    (st,) = parse_statements([{"queryid": "-42", "database": "app", "username": "u",
                               "calls": 0, "total_exec_time": None, "rows": None,
                               "shared_blks_hit": 3, "shared_blks_read": None}])
    m = checked("postgres_statements",
                REGISTRY["postgres_statements"].samples(PgStatementsFacts(True, (st,))))
    names = {name for name, _ in m}
    assert names == {P + "statements_configured", P + "statements_calls_total",
                     P + "statements_shared_blocks_hit_total"}  # no mean of 0 calls


@pytest.mark.parametrize(("libraries", "expected"), [
    ("pg_stat_statements", True), ("auto_explain, pg_stat_statements", True),
    ('"pg_stat_statements",timescaledb', True), ("", False),
    ("pg_stat_statements_extra", False),
])
def test_preloaded(libraries: str, expected: bool) -> None:
    assert preloaded(libraries) is expected


# ----------------------------------------------------------------- tables and sequences


def test_tables_rows_and_nulls() -> None:
    facts = parse_facts(rows("tables"))
    m = checked("postgres_tables", REGISTRY["postgres_tables"].samples(facts))
    t = {"schema": "public", "table": "fixture_dead"}
    assert v(m, P + "table_dead_tuples", **t) == 900
    assert v(m, P + "table_live_tuples", **t) == 100
    assert v(m, P + "table_index_scans_total", **t) is None  # no index: NULL idx_scan
    assert not any("_age_seconds" in name for name, _ in m)  # never vacuumed or analyzed
    assert v(m, P + "tables") == 1
    empty = checked("postgres_tables", REGISTRY["postgres_tables"].samples(parse_facts([])))
    assert empty == {(P + "tables", frozenset()): 0.0}


def test_sequence_rows_and_nulls() -> None:
    facts = parse_sequences(rows("sequences"))
    m = checked("postgres_sequences", REGISTRY["postgres_sequences"].samples(facts))
    ratio = P + "sequence_used_ratio"
    assert v(m, ratio, schema="public", sequence="fixture_up") == pytest.approx(94 / 99)
    assert v(m, ratio, schema="public", sequence="fixture_down") == pytest.approx(90 / 99)
    assert v(m, ratio, schema="public", sequence="fixture_hidden") is None  # no privilege
    assert v(m, ratio, schema="public", sequence="fixture_new") is None  # never used
    assert v(m, P + "sequences") == 4 and v(m, P + "sequences_unreadable") == 1
    empty = checked("postgres_sequences",
                    REGISTRY["postgres_sequences"].samples(parse_sequences([])))
    assert set(empty.values()) == {0.0} and len(empty) == 2


@pytest.mark.parametrize(("collector", "statement"), [
    ("postgres_tables", "tables"), ("postgres_sequences", "sequences")])
def test_top_n_limit_is_the_statement_parameter(collector: str, statement: str) -> None:
    conn = Answers({statement: []})
    seen: list[Any] = []
    query = conn.query
    conn.query = lambda name, params=None: (seen.append(params), query(name, params))[1]  # type: ignore[method-assign]
    REGISTRY[collector].read(conn)  # type: ignore[arg-type]
    REGISTRY[collector].configured({"limit": 7}).read(conn)  # type: ignore[arg-type]
    assert seen == [(50,), (7,)]
    with pytest.raises(ValueError, match="out of range"):
        REGISTRY[collector].configured({"limit": 0})


# ----------------------------------------------------------------- postgres_settings


@pytest.mark.parametrize(("unit", "expected"), [
    (None, (1.0, "")), ("", (1.0, "")), ("B", (1.0, "bytes")), ("kB", (1024.0, "bytes")),
    ("8kB", (8192.0, "bytes")), ("MB", (1048576.0, "bytes")), ("16MB", (16777216.0, "bytes")),
    ("GB", (1024.0 ** 3, "bytes")), ("us", (1e-6, "seconds")), ("ms", (0.001, "seconds")),
    ("s", (1.0, "seconds")), ("min", (60.0, "seconds")), ("h", (3600.0, "seconds")),
    ("d", (86400.0, "seconds")), ("furlong", None), ("8 parsecs", None),
])
def test_parse_unit(unit: str | None, expected: tuple[float, str] | None) -> None:
    assert parse_unit(unit) == expected


@pytest.mark.parametrize(("setting", "vartype", "unit", "expected"), [
    ("4096", "integer", "8kB", (33554432.0, "bytes")),  # shared_buffers 32MB
    ("4096", "integer", "kB", (4194304.0, "bytes")),  # work_mem 4MB
    ("1024", "integer", "MB", (1073741824.0, "bytes")),  # max_wal_size 1GB
    ("300", "integer", "s", (300.0, "seconds")),  # checkpoint_timeout
    ("1000", "integer", "ms", (1.0, "seconds")),  # deadlock_timeout
    ("2", "real", "ms", (0.002, "seconds")),  # autovacuum_vacuum_cost_delay
    ("1", "integer", "min", (60.0, "seconds")),
    ("-1", "integer", "kB", (-1.0, "bytes")),  # autovacuum_work_mem: use maintenance_work_mem
    ("-1", "integer", "ms", (-1.0, "seconds")),  # log_min_duration_statement: off
    ("0.9", "real", None, (0.9, "")), ("50", "integer", None, (50.0, "")),
    ("on", "bool", None, (1.0, "")), ("off", "bool", None, (0.0, "")),
    ("replica", "enum", None, None), ("x", "string", None, None),
    ("", "integer", None, None), ("maybe", "bool", None, None),
    ("12", "integer", "furlong", None),
])
def test_setting_value(setting: str, vartype: str, unit: str | None,
                       expected: tuple[float, str] | None) -> None:
    assert setting_value(setting, vartype, unit) == expected


def test_settings_rows_become_base_unit_families() -> None:
    facts = PgSettingsFacts(parse_settings(rows("settings")))
    samples = list(REGISTRY["postgres_settings"].samples(facts))
    m = checked("postgres_settings", samples)
    assert v(m, P + "settings_shared_buffers_bytes") == 32 * 1024 ** 2
    assert v(m, P + "settings_checkpoint_timeout_seconds") == 300
    assert v(m, P + "settings_autovacuum") == 1
    assert v(m, P + "settings_max_connections") == 50
    spec = next(s.spec for s in samples if s.name == P + "settings_work_mem_bytes")
    assert spec is not None and spec.type == "gauge"
    assert spec.help == ("Server setting work_mem (pg_settings; converted from kB to bytes; "
                         "-1 kept as PostgreSQL's 'disabled' marker).")
    # the captured settings are exactly the allow-listed ones PostgreSQL 15 has
    assert {r["name"] for r in rows("settings")} <= set(SETTINGS)
    assert len(samples) == len(rows("settings"))


def test_the_allow_list_is_documented() -> None:
    text = (REPO / "docs" / "postgres.md").read_text()
    block = text.split("<!-- settings allow-list -->", 1)[1].split("<!--", 1)[0]
    assert re.findall(r"`([a-z_]+)`", block) == list(SETTINGS)
