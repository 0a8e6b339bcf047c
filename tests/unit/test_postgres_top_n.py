"""The top-N collectors postgres_statements and postgres_sequences on rows captured from
the sandbox's PostgreSQL 15: parsing, NULL handling, and the `limit` option reaching the
statement as its parameter (postgres_tables: tests/unit/test_postgres_tables.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.postgres_sequences import parse_sequences
from dbgauge.collectors.postgres_statements import PgStatementsFacts, parse_statements, preloaded
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.metrics import Sample
from tests.helpers import as_dict, value
from tests.helpers.captured import Answers, json_rows

REGISTRY = registry()
P = "dbgauge_postgres_"
# captured from the sandbox's PostgreSQL 15 by capture_coverage.py (in that fixture folder)
CAPTURED, PG15 = "postgres-15/coverage-", "PostgreSQL 15"


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
                          json_rows(CAPTURED + "statements.json", PG15))
    facts = collector.read(conn)
    ((sql, params),) = conn.sent
    assert 'FROM "monitoring".pg_stat_statements AS s' in sql and params == (5,)
    assert "query" not in sql.replace("queryid", "")  # never the text
    m = as_dict("postgres_statements", collector.samples(facts))
    first = json_rows(CAPTURED + "statements.json", PG15)[0]
    labels = {"queryid": first["queryid"], "database": "app", "user": first["username"]}
    assert value(m, P + "statements_calls_total", **labels) == first["calls"]
    assert value(m, P + "statements_seconds_total", **labels) == pytest.approx(
        first["total_exec_time"] / 1000)
    assert value(m, P + "statements_mean_seconds", **labels) == pytest.approx(
        first["total_exec_time"] / 1000 / first["calls"])
    assert len({ls for name, ls in m if name == P + "statements_calls_total"}) == 5
    assert value(m, P + "statements_configured") == 1


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
    m = as_dict("postgres_statements",
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


def test_sequence_rows_and_nulls() -> None:
    facts = parse_sequences(json_rows(CAPTURED + "sequences.json", PG15))
    m = as_dict("postgres_sequences", REGISTRY["postgres_sequences"].samples(facts))
    ratio = P + "sequence_used_ratio"
    assert value(m, ratio, schema="public", sequence="fixture_up") == pytest.approx(94 / 99)
    assert value(m, ratio, schema="public", sequence="fixture_down") == pytest.approx(90 / 99)
    assert value(m, ratio, schema="public", sequence="fixture_hidden") is None  # no privilege
    assert value(m, ratio, schema="public", sequence="fixture_new") is None  # never used
    assert value(m, P + "sequences") == 4 and value(m, P + "sequences_unreadable") == 1
    assert value(m, P + "sequences_locked") == 0
    empty = as_dict("postgres_sequences",
                    REGISTRY["postgres_sequences"].samples(parse_sequences([])))
    assert set(empty.values()) == {0.0} and len(empty) == 3


def test_a_locked_sequence_is_counted_apart_from_the_unreadable_ones() -> None:
    rows = [{"schemaname": "public", "sequencename": "busy", "used_ratio": None,
             "sequences": 3, "unreadable": 1, "locked": 1},
            {"schemaname": "priv", "sequencename": "hidden", "used_ratio": None,
             "sequences": 3, "unreadable": 1, "locked": 1},
            {"schemaname": "public", "sequencename": "ok", "used_ratio": 0.5,
             "sequences": 3, "unreadable": 1, "locked": 1}]
    m = as_dict("postgres_sequences", REGISTRY["postgres_sequences"].samples(
        parse_sequences(rows)))
    assert value(m, P + "sequences_locked") == 1 and value(m, P + "sequences_unreadable") == 1
    assert value(m, P + "sequence_used_ratio", schema="public", sequence="busy") is None
    assert value(m, P + "sequence_used_ratio", schema="public", sequence="ok") == 0.5


@pytest.mark.parametrize(("collector", "statement"), [("postgres_sequences", "sequences")])
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
