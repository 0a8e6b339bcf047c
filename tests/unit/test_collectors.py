"""The collector protocol for every registered collector: read(conn) returns frozen facts
(frozen all the way down), samples(facts) is declared for that same type, and collect() is
the base class's samples(read(conn)), never overridden; metrics are declared once, in the
module's MetricTable; checks borrow facts through the collector modules' read_* functions."""

from __future__ import annotations

import ast
import dataclasses
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Sample,
    column_samples,
    present,
    state_set,
)
from tests.helpers import REPO

REGISTRY = registry()
# Collectors that checks may still make to read their facts (none: every module has its
# read_* functions).
MADE_BY_CHECKS: frozenset[str] = frozenset()


def _frozen_all_the_way(tp: Any, seen: set[Any]) -> list[str]:
    """Names of non-frozen dataclasses reachable from `tp` through its field types."""
    if tp in seen:
        return []
    seen.add(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        bad = [] if tp.__dataclass_params__.frozen else [tp.__name__]  # type: ignore[attr-defined]
        for hint in typing.get_type_hints(tp).values():
            bad += _frozen_all_the_way(hint, seen)
        return bad
    origin = typing.get_origin(tp)
    if origin in (list, dict, set):
        return [f"mutable {origin.__name__} in facts"]
    if origin in (tuple, typing.Union, types.UnionType, Mapping, frozenset):
        return [b for arg in typing.get_args(tp) if arg is not Ellipsis
                for b in _frozen_all_the_way(arg, seen)]
    return []


@pytest.mark.parametrize("name", [c.name for c in REGISTRY])
def test_collector_reads_frozen_facts(name: str) -> None:
    collector = REGISTRY[name]
    cls = type(collector)
    facts = typing.get_type_hints(cls.read)["return"]
    assert dataclasses.is_dataclass(facts), f"{name}.read must return a dataclass"
    assert _frozen_all_the_way(facts, set()) == []
    assert typing.get_type_hints(cls.samples)["facts"] is facts
    generic = next(b for b in cls.__orig_bases__  # type: ignore[attr-defined]
                   if typing.get_origin(b) is Collector)
    assert typing.get_args(generic) == (facts,)
    assert cls.collect is Collector.collect


def test_collect_is_samples_of_read() -> None:
    class Fake(Collector[tuple[int, ...]]):
        name = "fake"
        help = "a fake"
        kind = "mysql"
        flavors = frozenset({"mysql"})
        metrics = MetricTable()

        def read(self, conn: Any) -> tuple[int, ...]:
            conn.append("read")
            return (1, 2)

        def samples(self, facts: tuple[int, ...]) -> list[Any]:
            return [f * 10 for f in facts]

    asked: list[str] = []
    assert list(Fake().collect(asked)) == [10, 20]  # type: ignore[arg-type]
    assert asked == ["read"]
    with pytest.raises(TypeError):
        type("Half", (Collector,), {"read": lambda self, conn: None})()  # samples missing


@pytest.mark.parametrize("name", [c.name for c in REGISTRY])
def test_collector_declares_its_metrics_once_in_its_module_table(name: str) -> None:
    collector = REGISTRY[name]
    module = sys.modules[type(collector).__module__]
    assert isinstance(collector.metrics, MetricTable)
    assert getattr(module, "METRICS", None) is collector.metrics


def test_metric_table_keeps_order_indexes_names_and_refuses_twins() -> None:
    a = MetricSpec("dbgauge_test_a", "gauge", "A.")
    b = MetricSpec("dbgauge_test_b_total", "counter", "B.", ("x",))
    table = MetricTable(b, Column(a, "col_a", 0.5))
    assert list(table) == [b, a] and len(table) == 2
    assert "dbgauge_test_a" in table and table.get("dbgauge_test_b_total") is b
    assert table.get("dbgauge_test_c") is None
    assert table.columns == (Column(a, "col_a", 0.5),) and table.column_names == ("col_a",)
    with pytest.raises(ValueError, match="declared twice"):
        MetricTable(a, Column(a, "other"))
    run_time = MetricSpec("dbgauge_test_c", "gauge", "C.")
    assert table.sample(a, 1.0) == Sample("dbgauge_test_a", 1.0)  # declared: no own spec
    assert table.sample(run_time, 2.0) == Sample("dbgauge_test_c", 2.0, {}, run_time)


def test_samples_of_known_values_columns_and_state_sets() -> None:
    a = MetricSpec("dbgauge_test_a", "gauge", "A.", ("db",))
    b = MetricSpec("dbgauge_test_b", "gauge", "B.", ("db",))
    labels = {"db": "app"}
    assert list(present(((a, 1), (b, None)), labels)) == [Sample(a.name, 1.0, labels)]
    got = list(column_samples((Column(a, "ms", 0.001), Column(b, "absent")), {"ms": 1500.0},
                              labels))
    assert got == [Sample(a.name, 1.5, labels)]
    state = MetricSpec("dbgauge_test_state", "gauge", "S.", ("db", "state"))
    assert [(s.labels["state"], s.value) for s in state_set(state, "state", ("up", "down"),
                                                            "down", labels)] == [
        ("up", 0.0), ("down", 1.0)]


def test_checks_borrow_facts_through_read_functions_never_by_making_a_collector() -> None:
    """`X().read(conn)` with X a collector class: the read_* function of X's module is the
    one way (it reads only what the check needs, with that part's grants)."""
    classes = {type(c).__name__ for c in REGISTRY} - MADE_BY_CHECKS
    found = []
    for path in sorted((REPO / "checks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "read"
                    and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Name)
                    and node.value.func.id in classes):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value.func.id}")
    assert not found, found


def test_the_configs_collector_names_come_from_the_module_names_alone() -> None:
    """A config's `collectors:` lists are checked against `collectors.names` (file names,
    nothing imported); discovery holds each module to naming its collector so."""
    from dbgauge.collectors import names

    for kind in ("mysql", "postgres", "pgbouncer"):
        assert names(kind) == REGISTRY.names(kind) and names(kind)
