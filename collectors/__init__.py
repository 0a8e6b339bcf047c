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


ALL: tuple[Collector, ...] = _discover()
REGISTRY: dict[str, Collector] = {c.name: c for c in ALL}
if len(REGISTRY) != len(ALL):
    raise RuntimeError("two collectors share a name")


def collectors_for_kind(kind: str) -> list[Collector]:
    """Every registered collector for a target kind (mysql, postgres, pgbouncer)."""
    return [c for c in ALL if c.kind == kind]


def enabled_collectors(kind: str, names: list[str] | None) -> list[Collector]:
    """The configured list, or the kind's defaults when the config gives none."""
    if names is None:
        return [c for c in collectors_for_kind(kind) if c.default_enabled]
    return [REGISTRY[n] for n in names if n in REGISTRY and REGISTRY[n].kind == kind]
