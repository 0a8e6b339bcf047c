"""The collector registry: every module in this package defines exactly one collector.

The registry finds them, so adding a collector is adding one module (and its SQL). The
composition root (`dbgauge.app`) hands the registry to the exporter, the config and the
docs; nothing in the core imports this package.

Each module declares its metrics once, as `METRICS = MetricTable(...)` (the class says
`metrics = METRICS`), and parses rows with `dbgauge.toolkit.db` (`Row`, and the helpers of
`values`: `number`, `text`, `flag`/`is_on` for server booleans).

Checks borrow a collector's facts through its module's `read_*` functions (`read_status`,
`read_channels`, ...), never by making a collector: the collector's `read` is built from
them, so a check and a scrape read the same facts, and a check that needs part of them
(`read_local`, `read_summary`) runs only that part's statements and needs only its grants.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

from dbgauge.toolkit.metrics import AnyCollector, Collector
from dbgauge.toolkit.registry import Registry

__all__ = ["names", "registry"]


# A collector module's name is its collector's name; its prefix says the target kind
# (`_discover` holds every module to it), so the config's `collectors:` lists are checked
# from the file names alone (`names`), without importing sixty modules per command.
_PREFIX_KINDS = {"mysql": "mysql", "mariadb": "mysql", "postgres": "postgres",
                 "pgbouncer": "pgbouncer"}


def _modules() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(__path__)
            if not info.name.startswith("_") and not info.ispkg]  # not helpers, dialects/


def _kind(module: str) -> str | None:
    return _PREFIX_KINDS.get(module.split("_", 1)[0])


@cache
def names(kind: str) -> frozenset[str]:
    """The collectors of a target kind, by name, without importing them."""
    return frozenset(m for m in _modules() if _kind(m) == kind)


def _discover() -> list[AnyCollector]:
    found: list[AnyCollector] = []
    for name in _modules():
        module = importlib.import_module(f"{__name__}.{name}")
        classes = [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                   if issubclass(obj, Collector) and obj is not Collector
                   and obj.__module__ == module.__name__ and not inspect.isabstract(obj)]
        if len(classes) != 1:
            raise RuntimeError(f"collectors.{name} must define exactly one collector, "
                               f"found {len(classes)}")
        collector = classes[0]()
        if (collector.name, collector.kind) != (name, _kind(name)):
            raise RuntimeError(f"collectors.{name} defines {collector.name} for kind "
                               f"{collector.kind}: name the module after its collector, "
                               f"prefixed with its kind ({', '.join(_PREFIX_KINDS)})")
        found.append(collector)
    return found


@cache
def registry() -> Registry:
    """Every collector, discovered on first use (a check that borrows one collector's
    parser does not import them all)."""
    from dbgauge.collectors.dialects import dialects

    return Registry(_discover(), dialects())
