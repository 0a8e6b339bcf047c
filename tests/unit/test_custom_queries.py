"""The queries.yaml parser (postgres_exporter's format) and the pure rows -> samples step
of postgres_queries/mysql_queries; no server."""

from __future__ import annotations

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
    go_float,
    label_value,
    metric_value,
    queries_samples,
    query_samples,
    success_spec,
)
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
     "'GUAGE' is not one of LABEL, COUNTER, GAUGE, DISCARD, MAPPEDMETRIC, DURATION"),
    ("pg_a:\n  query: x\n  metrics:\n    - h: {usage: HISTOGRAM}\n",
     "q.yaml:4: pg_a.metrics[0].h.usage", "HISTOGRAM is not supported by dbgauge"),
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
    assert [(s.name, s.value, dict(s.labels)) for s in got] == [
        (success.name, 0.0, {"query": "pg_demo"}),
        (success.name, 0.0, {"query": "pg_other"}),
        ("pg_other_one", 1.0, {}),
        (success.name, 1.0, {"query": "pg_other"}),
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
        "MAPPEDMETRIC, DURATION")
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
