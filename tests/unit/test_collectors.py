"""The collector protocol for every registered collector: read(conn) returns frozen facts
(frozen all the way down), samples(facts) is declared for that same type, and collect() is
the base class's samples(read(conn)), never overridden."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.toolkit.metrics import Collector, MetricTable

REGISTRY = registry()


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
