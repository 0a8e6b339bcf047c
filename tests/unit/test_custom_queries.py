"""The queries.yaml parser (postgres_exporter's format) and the pure rows -> samples step
of postgres_queries/mysql_queries; no server."""

from __future__ import annotations

import math
import os
import subprocess
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from dbgauge.app import parse_config, registry
from dbgauge.collectors._queries import (
    QueriesFacts,
    QueryRows,
    queries_samples,
    query_samples,
    success_spec,
)
from dbgauge.collectors._values import go_float, label_value, metric_value
from dbgauge.toolkit.custom_queries import load_queries, parse_queries, parse_range, read_text_file
from dbgauge.toolkit.errors import ConfigError, Incomplete
from dbgauge.toolkit.metrics import Sample
from tests.helpers import DBGAUGE, REPO

GOOD = """\
pg_demo:
  query: "SELECT a, b, c, d, e, f FROM t"
  master: true
  cache_seconds: 30
  runonserver: ">=10.0.0 <17 || =9.6.24"
  metrics:
    - a:
        usage: "LABEL"
        description: "A label"
    - b: {usage: COUNTER, description: "A counter"}
    - c: {usage: GAUGE, description: "A gauge"}
    - d: {usage: DISCARD}
    - e: {usage: MAPPEDMETRIC, description: "A state", metric_mapping: {up: 1, down: 0}}
    - f: {usage: DURATION, description: "A duration", pg_version: ">=12"}
pg_other:
  query: SELECT 1 AS one
  metrics: [{one: {usage: GAUGE}}]
"""


def test_every_usage_and_option_is_read() -> None:
    parsed = parse_queries(GOOD, "q.yaml")
    demo, other = parsed.queries
    assert demo.name == "pg_demo" and demo.sql == "SELECT a, b, c, d, e, f FROM t"
    assert demo.master is True and demo.cache_seconds == 30
    assert [(c.name, c.usage) for c in demo.columns] == [
        ("a", "LABEL"), ("b", "COUNTER"), ("c", "GAUGE"), ("d", "DISCARD"),
        ("e", "MAPPEDMETRIC"), ("f", "DURATION")]
    assert demo.labels == ("a",)
    assert demo.column("e").mapping == {"up": 1.0, "down": 0.0}  # type: ignore[union-attr]
    assert demo.column("f").metric("pg_demo") == "pg_demo_f_milliseconds"  # type: ignore[union-attr]
    assert demo.runonserver is not None
    assert demo.runonserver.matches((15, 4)) and demo.runonserver.matches((9, 6, 24))
    assert not demo.runonserver.matches((17, 0)) and not demo.runonserver.matches((9, 6, 23))
    assert other.cache_seconds == 0 and other.master is False and other.runonserver is None


@pytest.mark.parametrize(("text", "where", "message"), [
    ("pg_a:\n  query: x\n  metrics:\n    - b: {usage: GAUGE}\n    - bar: {usage: GUAGE}\n",
     "q.yaml:5: pg_a.metrics[1].bar.usage",
     "'GUAGE' is not one of LABEL, COUNTER, GAUGE, DISCARD, MAPPEDMETRIC, DURATION, "
     "HISTOGRAM"),
    ("pg_a:\n  query: x\n  metrics:\n    - h: {usage: HISTOGRAM}\n    - h_sum: {usage: GAUGE}\n",
     "q.yaml:5: pg_a.metrics[1].h_sum", "column 'h_sum' is part of HISTOGRAM 'h'"),
    ("pg_a:\n  query: x\n  metrics:\n    - le: {usage: LABEL}\n    - h: {usage: HISTOGRAM}\n",
     "q.yaml:3: pg_a.metrics", "cannot have a LABEL column named 'le'"),
    ("pg_a:\n  query: x\n  metrics: [{h: {usage: HISTOGRAM}}]\n"
     "pg_a_h:\n  query: y\n  metrics: [{count: {usage: GAUGE}}]\n",
     "q.yaml:6: pg_a_h.metrics[0].count", "metric pg_a_h_count is also made by pg_a.h"),
    ("pg_a:\n  query: x\n  metrics:\n    - h: {usage: 3}\n",
     "q.yaml:4: pg_a.metrics[0].h.usage", "Input should be a valid string"),
    ("pg_a:\n  metrics:\n    - b: {usage: GAUGE}\n", "q.yaml:1: pg_a.query",
     "required key is missing"),
    ("pg_a:\n  query: x\n  querry: y\n  metrics: [{b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.querry", "unknown key"),
    ("pg_a:\n  query: x\n  metrics: []\n", "q.yaml:3: pg_a.metrics", "at least 1 item"),
    ("pg_a:\n  query: x\n  metrics: [{}]\n", "q.yaml:3: pg_a.metrics[0]",
     "an entry needs a column name"),
    ("pg_a:\n  query: x\n  master: yes please\n  metrics: [{b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.master", "valid boolean"),
    ("pg_a:\n  query: x\n  cache_seconds: -1\n  metrics: [{b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.cache_seconds", "greater than or equal to 0"),
    ("pg_a:\n  query: x\n  cache_seconds: true\n  metrics: [{b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.cache_seconds", "valid integer"),
    ("pg_a:\n  query: x\n  cache_seconds: " + "9" * 5000 + "\n  metrics: [{b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.cache_seconds", "a number of 5000 characters is not plausible"),
    ("pg_a:\n  query: x\n  runonserver: newest\n  metrics: [{b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.runonserver", "'newest' is not a version range"),
    ("pg-a:\n  query: x\n  metrics: [{b: {usage: GAUGE}}]\n", "q.yaml:1: pg-a",
     "'pg-a' is not a valid metric name prefix"),
    ("pg_a:\n  query: x\n  metrics: [{b c: {usage: GAUGE}}]\n", "q.yaml:3: pg_a.metrics[0].b c",
     "'b c' is not a usable column name"),
    ("pg_a:\n  query: x\n  metrics: [{target: {usage: LABEL}}, {b: {usage: GAUGE}}]\n",
     "q.yaml:3: pg_a.metrics[0].target", "label 'target' is set by dbgauge itself"),
    ("pg_a:\n  query: x\n  metrics: [{b: {usage: GAUGE, metric_mapping: {x: 1}}}]\n",
     "q.yaml:3: pg_a.metrics[0].b.metric_mapping", "metric_mapping is for MAPPEDMETRIC"),
    ("pg_a:\n  query: x\n  metrics: [{b: {usage: GAUGE}}]\n"
     "pg_a:\n  query: y\n  metrics: [{c: {usage: GAUGE}}]\n",
     "q.yaml:4: pg_a", "'pg_a' is defined twice"),
    ("pg_a:\n  query: x\n  metrics:\n    - b: {usage: GAUGE}\n    - b: {usage: COUNTER}\n",
     "q.yaml:5: pg_a.metrics[1].b", "column 'b' is listed twice in pg_a"),
    ("pg_a:\n  query: x\n  metrics:\n    - b: {usage: GAUGE, usage: LABEL}\n",
     "q.yaml:4: pg_a.metrics[0].b.usage", "'usage' is defined twice"),
    ("pg_a:\n  query: x\n  metrics: [{b_c: {usage: GAUGE}}]\n"
     "pg_a_b:\n  query: y\n  metrics: [{c: {usage: COUNTER}}]\n",
     "q.yaml:6: pg_a_b.metrics[0].c", "metric pg_a_b_c is also made by pg_a.b_c"),
    ("- pg_a\n", "q.yaml", "the top level must be a mapping of metric-name prefixes"),
    ("pg_a: [\n", "q.yaml:2", "invalid YAML"),
    ("[" * 5000, "q.yaml", "invalid YAML: nested too deeply"),
])
def test_errors_name_file_line_and_path(text: str, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_queries(text, "q.yaml")
    first = str(info.value).split("\n")[0]
    assert first.startswith(where + ":"), first
    assert message in first


def test_an_empty_file_has_no_queries() -> None:
    assert parse_queries("", "q.yaml").queries == ()
    assert parse_queries("# nothing yet\n", "q.yaml").queries == ()


def test_hostile_files_are_refused(tmp_path: Path) -> None:
    refused = "cannot read queries file: not a regular file"
    with pytest.raises(ConfigError, match=rf"^/dev/zero: {refused} \(a device\)$"):
        read_text_file("/dev/zero")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=rf"fifo.yaml: {refused} \(a FIFO\)$"):
        read_text_file(str(fifo))  # no writer: a blocking open would never return
    with pytest.raises(ConfigError, match=r"not a regular file \(a directory\)"):
        read_text_file(str(tmp_path))
    with pytest.raises(ConfigError, match=r"missing\.yaml: cannot read queries file: No such file"):
        load_queries(str(tmp_path / "missing.yaml"))
    huge = tmp_path / "huge.yaml"
    huge.write_bytes(b"# " + b"x" * (1 << 20) + b"\n")
    with pytest.raises(ConfigError, match=r"huge\.yaml: queries file is larger than 1024 KiB"):
        load_queries(str(huge))
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"pg_a:\n  query: SELECT 1\n  # caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1.yaml:3: not UTF-8 text \(byte 0xe9\)"):
        load_queries(str(latin1))
    exact = tmp_path / "exact.yaml"
    exact.write_bytes(b"#" * ((1 << 20) - 1) + b"\n")
    assert load_queries(str(exact)).queries == ()  # 1 MiB itself is fine


def test_version_ranges() -> None:
    assert parse_range(">=10").matches((10, 0))
    assert parse_range("<10.1.0").matches((10, 0, 9))
    assert not parse_range("!=15.4.0").matches((15, 4))
    assert parse_range("10.11.6").matches((10, 11, 6))
    assert parse_range(">9.6 <=14 || >=16").matches((16, 1))
    assert not parse_range(">9.6 <=14 || >=16").matches((15, 0))
    for bad in ("", "||", ">=x", ">= 10 <"):
        with pytest.raises(ValueError):
            parse_range(bad)


# ------------------------------------------------------------------ rows -> samples


def test_values_as_postgres_exporter_reads_them() -> None:
    assert metric_value(True) == 1 and metric_value(False) == 0
    assert metric_value(7) == 7 and metric_value(Decimal("1.50")) == 1.5
    assert metric_value("2.5e3") == 2500 and metric_value(b"12") == 12
    assert metric_value(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)) == 1704164645
    assert metric_value(datetime(2024, 1, 2, 3, 4, 5)) == 1704164645  # no zone: UTC
    assert metric_value(date(2024, 1, 2)) == 1704153600
    for unreadable in (None, "ten", " 1", "1_000", [1]):
        assert metric_value(unreadable) is None
    assert label_value(None) == "" and label_value(True) == "true"
    assert label_value(Decimal("1.50")) == "1.50" and label_value(b"x") == "x"
    assert label_value(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)) == "1704164645"


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0"), (1.0, "1"), (0.25, "0.25"), (100.0, "100"), (123456.0, "123456"),
    (1e6, "1e+06"), (1234567.5, "1.2345675e+06"), (0.0001, "0.0001"), (0.00001, "1e-05"),
    (-2.5, "-2.5"), (1e21, "1e+21"), (float("inf"), "+Inf"), (float("nan"), "NaN"),
])
def test_float_labels_as_go_prints_them(value: float, text: str) -> None:
    assert go_float(value) == text


def _demo() -> QueryRows:
    query = parse_queries(GOOD, "q.yaml").queries[0]
    return QueryRows(query, (
        {"a": "x", "b": 10, "c": 1.5, "d": 99, "e": "up", "f": "1m30.5s", "g": 3},
        {"a": "y", "b": None, "c": Decimal(2), "d": 1, "e": "sideways", "f": 250, "g": "n/a"},
    ))


def test_rows_become_postgres_exporter_samples() -> None:
    samples, error = query_samples(_demo(), (15, 4), "db:5432")
    assert error is None
    got = {(s.name, s.labels["a"]): (s.value, s.spec.type if s.spec else None)
           for s in samples}
    assert got == {
        ("pg_demo_b", "x"): (10, "untyped"),  # a counter without _total
        ("pg_demo_c", "x"): (1.5, "gauge"), ("pg_demo_c", "y"): (2, "gauge"),
        ("pg_demo_e", "x"): (1, "gauge"),  # mapped; "sideways" is not in the mapping
        ("pg_demo_f_milliseconds", "x"): (90500, "gauge"),
        ("pg_demo_f_milliseconds", "y"): (250, "gauge"),
        ("pg_demo_g", "x"): (3, "untyped"),  # not listed: untyped, as postgres_exporter
    }
    assert all(s.labels == {"a": s.labels["a"], "server": "db:5432"} for s in samples)
    assert all(s.spec is not None and s.spec.labels == ("a", "server") for s in samples)
    # before 12 the pg_version-limited column counts as discarded
    older, _ = query_samples(_demo(), (11, 9), None)
    assert not any(s.name == "pg_demo_f_milliseconds" for s in older)
    assert all("server" not in s.labels for s in older)


def test_counter_types_keep_promtool_quiet() -> None:
    text = ("pg_t:\n  query: x\n  metrics:\n    - calls_total: {usage: COUNTER}\n"
            "    - level_total: {usage: GAUGE}\n")
    rows = QueryRows(parse_queries(text, "q.yaml").queries[0],
                     ({"calls_total": 1, "level_total": 2},))
    samples, _ = query_samples(rows, (15,), None)
    assert {s.name: s.spec.type for s in samples if s.spec} == {
        "pg_t_calls_total": "counter", "pg_t_level_total": "untyped"}


def test_a_broken_query_leaves_the_others() -> None:
    missing_label = QueryRows(_demo().query, ({"b": 1},))
    assert query_samples(missing_label, (15,), None) == \
        ([], "query pg_demo returned no column 'a' (a LABEL)")
    twice = QueryRows(_demo().query, ({"a": "x", "c": 1}, {"a": "x", "c": 2}))
    assert query_samples(twice, (15,), None)[1] == \
        "query pg_demo returned two rows with the same labels {'a': 'x'}"
    other = parse_queries(GOOD, "q.yaml").queries[1]
    facts = QueriesFacts((twice, QueryRows(other, error="query pg_other: boom"),
                          QueryRows(other, ({"one": 1},))), (15,), None)
    success = success_spec("postgres")
    got: list[Sample] = []
    with pytest.raises(Incomplete, match="2 of 3 custom queries failed; first: query pg_demo "
                                         "returned two rows"):
        got.extend(queries_samples(facts, success))  # what came before the raise stands
    # one success series per query (0 when any of its runs failed), after the samples
    assert [(s.name, s.value, dict(s.labels)) for s in got] == [
        ("pg_other_one", 1.0, {}),
        (success.name, 0.0, {"query": "pg_demo"}),
        (success.name, 0.0, {"query": "pg_other"}),
    ]


def test_a_series_two_databases_give_is_kept_once_and_said() -> None:
    """postgres_queries over several databases: a query whose rows do not tell the
    databases apart fails in the second one, whose rows are dropped; a query that labels
    them passes everywhere."""
    other = parse_queries(GOOD, "q.yaml").queries[1]
    demo = _demo().query
    facts = QueriesFacts((QueryRows(other, ({"one": 1},)),
                          QueryRows(demo, ({"a": "app", "c": 1},)),
                          QueryRows(other, ({"one": 2},), database="drift"),
                          QueryRows(demo, ({"a": "drift", "c": 2},), database="drift")),
                         (15,), None, (("app", None), ("drift", None)))
    success = success_spec("postgres")
    got: list[Sample] = []
    with pytest.raises(Incomplete, match="query pg_other in database drift returned a series "
                                         "another database gave too"):
        got.extend(queries_samples(facts, success))
    assert [(s.name, s.value, dict(s.labels)) for s in got] == [
        ("pg_other_one", 1.0, {}),
        ("pg_demo_c", 1.0, {"a": "app"}),
        ("pg_demo_c", 2.0, {"a": "drift"}),
        (success.name, 0.0, {"query": "pg_other"}),
        (success.name, 1.0, {"query": "pg_demo"}),
    ]


def test_a_family_is_never_made_twice_with_other_labels() -> None:
    text = ("pg_a:\n  query: x\n  metrics: [{l: {usage: LABEL}}, {b: {usage: GAUGE}}]\n"
            "pg_a_x:\n  query: y\n  metrics: [{n: {usage: GAUGE}}]\n")
    first, second = parse_queries(text, "q.yaml").queries
    # pg_a's unlisted column `x_n` makes pg_a_x_n, the name pg_a_x.n declares
    facts = QueriesFacts((QueryRows(first, ({"l": "1", "b": 1, "x_n": 5},)),
                          QueryRows(second, ({"n": 7},))), (15,), None)
    values = [(s.name, s.value) for s in queries_samples(facts, success_spec("mysql"))
              if not s.name.startswith("dbgauge_")]
    assert values == [("pg_a_b", 1), ("pg_a_x_n", 5)]


# ------------------------------------------------------------------ the collectors


def _config(queries: Path, collector: str = "postgres_queries") -> str:
    kind, dsn = ("mysql", "mysql://u@h/") if collector == "mysql_queries" else \
        ("postgres", "postgresql://u@h/app")
    return (f"targets:\n  - name: a\n    kind: {kind}\n    dsn: '{dsn}'\n"
            f"    collector_options:\n      {collector}: {{file: '{queries}'}}\n")


@pytest.mark.parametrize("collector", ["postgres_queries", "mysql_queries"])
def test_a_bad_file_fails_config_load(tmp_path: Path, collector: str) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_text(GOOD.replace("usage: GAUGE, desc", "usage: GUAGE, desc"))
    with pytest.raises(ConfigError) as info:
        parse_config(_config(queries, collector), "cfg.yaml")
    assert str(info.value) == (
        f"cfg.yaml:2: targets[0]: {collector}.file: {queries}:11: "
        "pg_demo.metrics[2].c.usage: 'GUAGE' is not one of LABEL, COUNTER, GAUGE, DISCARD, "
        "MAPPEDMETRIC, DURATION, HISTOGRAM")
    queries.write_text(GOOD)
    target = parse_config(_config(queries, collector), "cfg.yaml").target("a")
    (configured,) = [c for c in registry().for_target(target) if c.name == collector]
    assert configured.setting("file") == str(queries)
    assert configured is not registry()[collector]


def test_config_check_command_names_the_line(tmp_path: Path) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_bytes(b"pg_a:\n  query: SELECT 1\n  metrics: [{a: {usage: GAUGE}}]\n\xff\n")
    config = tmp_path / "dbgauge.yaml"
    config.write_text(_config(queries))
    out = subprocess.run([*DBGAUGE, "config", "check", str(config)], capture_output=True,
                         text=True, timeout=60, cwd=REPO, check=False)
    assert out.returncode != 0
    assert f"postgres_queries.file: {queries}:4: not UTF-8 text (byte 0xff)" in out.stderr
    assert "Traceback" not in out.stderr


def test_no_file_no_queries() -> None:
    collector = registry()["postgres_queries"]
    facts = collector.read(None)  # type: ignore[arg-type]  # no file: the server is not asked
    assert facts == QueriesFacts()
    assert list(collector.samples(facts)) == list[Sample]()


# ------------------------------------------------------------------ HISTOGRAM

HISTOGRAMS = """\
pg_h:
  query: x
  metrics:
    - name: {usage: LABEL}
    - seconds: {usage: HISTOGRAM, description: Some seconds}
    - sizes: {usage: HISTOGRAM}
    - sizes_count: {usage: DISCARD}
    - other: {usage: GAUGE}
"""


def _histograms(*rows: dict[str, object]) -> tuple[dict[tuple[str, frozenset[tuple[str, str]]],
                                                         float], str | None]:
    query = parse_queries(HISTOGRAMS, "q.yaml").queries[0]
    samples, error = query_samples(QueryRows(query, rows), (15,), "db:5432")
    assert all(s.spec is not None and s.spec.name in ("pg_h_seconds", "pg_h_sizes", "pg_h_other")
               for s in samples)
    return {(s.name, frozenset(s.labels.items()) - {("server", "db:5432")}): s.value
            for s in samples}, error


def _bucket(name: str, row: str, le: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return (f"pg_h_{name}_bucket", frozenset({("name", row), ("le", le)}))


def test_histograms_as_postgres_exporter_0_11_exports_them() -> None:
    """Rows as psycopg returns them for the query the integration test runs; the values
    are what postgres_exporter 0.11.1 (Debian's) exported for it on the sandbox."""
    got, error = _histograms(
        {"name": "a", "seconds": [0.5, 1.0, 2.5, 1e6], "seconds_bucket": [1, 3, 4, 5],
         "seconds_sum": 12.75, "seconds_count": 6, "sizes": [1, 2], "sizes_bucket": [7, 9],
         "sizes_sum": None, "sizes_count": None, "other": 7},
        {"name": "b", "seconds": [0.5, 1.0, math.inf], "seconds_bucket": [0, 0, 2],
         "seconds_sum": 0.5, "seconds_count": 2, "sizes": [], "sizes_bucket": [],
         "sizes_sum": 1.0, "sizes_count": 0, "other": 8})
    assert error is None
    a, b = frozenset({("name", "a")}), frozenset({("name", "b")})
    want = {
        _bucket("seconds", "a", "0.5"): 1, _bucket("seconds", "a", "1"): 3,
        _bucket("seconds", "a", "2.5"): 4, _bucket("seconds", "a", "1e+06"): 5,
        _bucket("seconds", "a", "+Inf"): 6, ("pg_h_seconds_sum", a): 12.75,
        ("pg_h_seconds_count", a): 6,
        _bucket("sizes", "a", "1"): 7, _bucket("sizes", "a", "2"): 9,
        _bucket("sizes", "a", "+Inf"): 0, ("pg_h_sizes_sum", a): math.nan,  # NULL sum
        ("pg_h_sizes_count", a): 0,  # NULL count
        ("pg_h_other", a): 7,
        # +Inf among the bounds: its own count, not seconds_count
        _bucket("seconds", "b", "0.5"): 0, _bucket("seconds", "b", "1"): 0,
        _bucket("seconds", "b", "+Inf"): 2, ("pg_h_seconds_sum", b): 0.5,
        ("pg_h_seconds_count", b): 2,
        _bucket("sizes", "b", "+Inf"): 0, ("pg_h_sizes_sum", b): 1, ("pg_h_sizes_count", b): 0,
        ("pg_h_other", b): 8,
    }
    assert set(got) == set(want)
    assert all(got[k] == v or (math.isnan(v) and math.isnan(got[k])) for k, v in want.items())


def test_histogram_values_read_as_lib_pq_and_postgres_exporter_read_them() -> None:
    row = {"name": "a", "sizes": [], "sizes_bucket": [], "sizes_sum": 0, "sizes_count": 0,
           "other": None}
    # a +Inf bound's count is its own; repeated bounds keep the last count, in bound order
    got, _ = _histograms({**row, "seconds": [1.0, math.inf, 2.0], "seconds_bucket": [1, 3, 2],
                          "seconds_sum": Decimal("12.75"), "seconds_count": Decimal("5")})
    assert [(dict(k[1])["le"], v) for k, v in got.items() if k[0] == "pg_h_seconds_bucket"] == [
        ("1", 1), ("2", 2), ("+Inf", 3)]
    got, _ = _histograms({**row, "seconds": [2, 1, 2], "seconds_bucket": [7, 8, 9],
                          "seconds_sum": 1, "seconds_count": -1})
    wrapped = float(2**64 - 1)  # uint64(-1)
    assert [(dict(k[1])["le"], v) for k, v in got.items() if k[0] == "pg_h_seconds_bucket"] == [
        ("1", 8), ("2", 9), ("+Inf", wrapped)]
    assert got[("pg_h_seconds_count", frozenset({("name", "a")}))] == wrapped
    # array text in a text column; more counts than bounds: the extra is ignored
    got, _ = _histograms({**row, "seconds": "{1,2.5}", "seconds_bucket": "{4,5,6}",
                          "seconds_sum": "3", "seconds_count": "7"})
    assert got[_bucket("seconds", "a", "2.5")] == 5
    # a sum or count it cannot read leaves the histogram out of the row, nothing else
    for bad in ({"seconds_sum": "x"}, {"seconds_count": "7.0"}, {"seconds_count": "-1"}):
        got, error = _histograms({**row, "seconds": [1], "seconds_bucket": [1],
                                  "seconds_sum": 1, "seconds_count": 1, **bad})
        assert error is None and not any(k[0].startswith("pg_h_seconds") for k in got), bad
        assert got[_bucket("sizes", "a", "+Inf")] == 0


def test_a_histogram_the_row_cannot_give_fails_the_query() -> None:
    row = {"name": "a", "sizes": [], "sizes_bucket": [], "sizes_sum": 0, "sizes_count": 0,
           "seconds_sum": 1, "seconds_count": 1}
    for seconds, buckets, why in (
            (5, [1], "column seconds: not an array (int)"),
            ([Decimal("1.5")], [Decimal("2.0")], "bucket count '2.0' is not a 64-bit integer"),
            ([None], [1], "bound None is not a number"),
            ([[1], [2]], [1], "a multi-dimensional array")):
        got, error = _histograms({**row, "seconds": seconds, "seconds_bucket": buckets})
        assert got == {} and error is not None and why in error, error
    got, error = _histograms({"name": "a", "seconds": [1], "seconds_sum": 1, "seconds_count": 1,
                              "sizes": [], "sizes_bucket": [], "sizes_sum": 0,
                              "sizes_count": 0})
    assert got == {} and error == ("query pg_h: no column 'seconds_bucket' (HISTOGRAM seconds "
                                   "needs seconds_bucket, seconds_sum and seconds_count)")


def test_a_histogram_renders_as_one_family_like_prometheus_client() -> None:
    from dbgauge.toolkit.exporter.scrape import SampleOut, TargetResult
    from dbgauge.toolkit.render.prometheus import build_families, negotiate, render
    from tests.helpers.exposition import reference

    query = parse_queries(HISTOGRAMS, "q.yaml").queries[0]
    samples, _ = query_samples(QueryRows(query, ({
        "name": "a", "seconds": [0.5, 1.0], "seconds_bucket": [1, 3], "seconds_sum": 2.5,
        "seconds_count": 4, "sizes": None, "sizes_bucket": None, "sizes_sum": 1,
        "sizes_count": 0},)), (15,), None)
    result = TargetResult("pg", "postgres", (("target", "pg"),), True, 0.01, None, None, (), tuple(
        SampleOut(s.name, tuple(sorted({**s.labels, "target": "pg"}.items())), s.value, s.spec)
        for s in samples))
    families = [f for f in build_families([result]) if f.spec.name.startswith("pg_h_")]
    assert [f.spec.name for f in families] == ["pg_h_seconds", "pg_h_sizes"]
    text = render(families).decode()
    assert text.count("# TYPE pg_h_seconds histogram") == 1
    assert 'pg_h_seconds_bucket{le="0.5",name="a",target="pg"} 1.0' in text
    assert 'pg_h_seconds_bucket{le="+Inf",name="a",target="pg"} 4.0' in text
    assert 'pg_h_seconds_count{name="a",target="pg"} 4.0' in text
    for accept in (None, "application/openmetrics-text; version=1.0.0"):
        assert render(families, fmt=negotiate(accept)) == reference(families, accept=accept)[0]


def test_the_readme_histogram_example_is_a_valid_file() -> None:
    readme = (REPO / "README.md").read_text()
    start = readme.index("  pg_process_idle:\n")
    block = readme[start:readme.index("  ```", start)]
    (query,) = parse_queries("\n".join(line[2:] for line in block.splitlines()),
                             "README.md").queries
    assert [(c.name, c.usage) for c in query.columns] == [
        ("application_name", "LABEL"), ("seconds", "HISTOGRAM")]


def test_a_comma_in_an_unquoted_description_is_put_back() -> None:
    """postgres_exporter's own example file writes `{usage: GAUGE, description: Total disk
    space used by this index, in bytes}`: YAML ends the description at the comma and makes
    `in bytes` a key without a value (the Go exporter ignores it). dbgauge reads the
    description as meant -- the whole upstream file loads -- while a key with a value is
    still refused."""
    got = parse_queries("pg_a:\n  query: x\n  metrics:\n"
                        "    - b: {usage: GAUGE, description: Disk space, in bytes, or so}\n",
                        "q.yaml")
    assert got.queries[0].columns[0].description == "Disk space, in bytes, or so"
    upstream = (Path(__file__).parent.parent / "fixtures" / "postgres-tables"
                / "upstream_queries.yaml")
    assert parse_queries(upstream.read_text(), str(upstream)).queries
    with pytest.raises(ConfigError, match="colour"):
        parse_queries("pg_a:\n  query: x\n  metrics:\n"
                      "    - b: {usage: GAUGE, description: D, colour: red}\n", "q.yaml")
