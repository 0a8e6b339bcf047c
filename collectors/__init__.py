"""The collector registry: every module in this package defines exactly one collector.

The registry finds them, so adding a collector is adding one module (and its SQL). The
composition root (`dbgauge.app`) hands the registry to the exporter, the config and the
docs; nothing in the core imports this package.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

from dbgauge.toolkit.metrics import AnyCollector, Collector, Registry

__all__ = ["registry"]


def _discover() -> list[AnyCollector]:
    found: list[AnyCollector] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                   if issubclass(obj, Collector) and obj is not Collector
                   and obj.__module__ == module.__name__ and not inspect.isabstract(obj)]
        if len(classes) != 1:
            raise RuntimeError(f"collectors.{info.name} must define exactly one collector, "
                               f"found {len(classes)}")
        found.append(classes[0]())
    return found


@cache
def registry() -> Registry:
    """Every collector, discovered on first use (a check that borrows one collector's
    parser does not import them all)."""
    return Registry(_discover())
