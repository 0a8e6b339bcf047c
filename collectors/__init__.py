"""The collector registry: name -> collector, default on/off, per target kind.

Every module in this package (other than `base`) defines exactly one `Collector`
subclass; the registry finds them, so adding a collector is adding one module.
Config keys (`targets[].collectors`) and `/probe?collect[]=` filters are checked
against this registry; the README's metrics reference is generated from it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache
from typing import TYPE_CHECKING, Any

from collectors.base import Collector, MetricSpec, Sample

__all__ = ["ALL", "REGISTRY", "Collector", "MetricSpec", "Sample", "collectors_for_kind",
           "enabled_collectors"]

_KIND_ORDER = {"mysql": 0, "postgres": 1, "pgbouncer": 2}


def _discover() -> tuple[Collector, ...]:
    found: list[Collector] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                   if issubclass(obj, Collector) and obj is not Collector
                   and obj.__module__ == module.__name__ and not inspect.isabstract(obj)]
        if len(classes) != 1:
            raise RuntimeError(f"collectors.{info.name} must define exactly one collector, "
                               f"found {len(classes)}")
        found.append(classes[0]())
    return tuple(sorted(found, key=lambda c: (_KIND_ORDER.get(c.kind, 9), c.name)))


@cache
def _registry() -> tuple[tuple[Collector, ...], dict[str, Collector]]:
    found = _discover()
    by_name = {c.name: c for c in found}
    if len(by_name) != len(found):
        raise RuntimeError("two collectors share a name")
    return found, by_name


if TYPE_CHECKING:
    ALL: tuple[Collector, ...]
    REGISTRY: dict[str, Collector]
else:
    def __getattr__(name: str) -> Any:
        # ALL and REGISTRY are built on first use: a check that only borrows a helper
        # module (collectors._mysql) does not import every collector.
        if name == "ALL":
            return _registry()[0]
        if name == "REGISTRY":
            return _registry()[1]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def collectors_for_kind(kind: str) -> list[Collector]:
    """Every registered collector for a target kind (mysql, postgres, pgbouncer)."""
    return [c for c in _registry()[0] if c.kind == kind]


def enabled_collectors(kind: str, names: list[str] | None) -> list[Collector]:
    """The configured list, or the kind's defaults when the config gives none."""
    if names is None:
        return [c for c in collectors_for_kind(kind) if c.default_enabled]
    registry = _registry()[1]
    return [registry[n] for n in names if n in registry and registry[n].kind == kind]
