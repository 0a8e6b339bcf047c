"""The health checks: one registry, found in this package's modules.

A check is a `HealthCheck` (`model`) declared in a module of this package -- most hold one
(`lag.CHECK`), a few share their reads (`activity`, `maintenance`). `health_checks()`
finds them, so adding a check is adding its module (and its test): the `dbgauge check`
commands, their --help and defaults, the docs table (`docs`) and the daemon's `checks:`
entries are all made from the registry. Listing the checks imports every module, so a
check module imports only `model` and the core's light modules at its top; the
collectors it reads the server through are imported in the function that reads.

A check looks at nodes: a `toolkit.targets.Selection` of configured targets (`--config`
+ `--target`) or servers named by DSN on the command line (`--node`); `run` runs one
over them (`checks.nodes`: a connection per node, in parallel, and a node that could not
be checked is a finding naming it and why -- CRITICAL when it is down, else UNKNOWN,
never an OK).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache

from dbgauge.checks.health.model import HealthCheck, Thresholds

__all__ = ["HealthCheck", "Thresholds", "health_checks"]

_NOT_CHECKS = frozenset({"model", "run", "docs"})  # the modules that declare no check


@cache
def health_checks() -> Mapping[str, HealthCheck]:
    """Every health check by command name, in name order."""
    found: dict[str, HealthCheck] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in _NOT_CHECKS:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for check in vars(module).values():
            if isinstance(check, HealthCheck) and found.setdefault(check.name, check) is not check:
                raise RuntimeError(f"two health checks are named {check.name!r}")
    return {name: found[name] for name in sorted(found)}
