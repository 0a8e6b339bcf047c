"""Dialects: the peer exporters' metric names, from the facts dbgauge's collectors read.

One module per peer (`mysqld_exporter`, `postgres_exporter`, `pgbouncer_exporter`), each
defining `DIALECT`, a `toolkit.dialect.Dialect`: for each dbgauge collector it maps, a pure
function from that collector's facts to the peer's samples (names, labels, types and
value semantics as the peer's users' dashboards and alerts query them). `serve --compat`
and `daemon: {compat: [...]}` turn them on; see docs/compat.md.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from dbgauge.toolkit.dialect import Dialect

__all__ = ["dialects"]


@cache
def dialects() -> tuple[Dialect, ...]:
    """Every dialect, by module (each module defines `DIALECT`)."""
    found: list[Dialect] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue  # helpers shared by dialects
        module = importlib.import_module(f"{__name__}.{info.name}")
        dialect = getattr(module, "DIALECT", None)
        if not isinstance(dialect, Dialect) or dialect.name != info.name:
            raise RuntimeError(f"collectors.dialects.{info.name} must define DIALECT, a "
                               f"Dialect named {info.name!r}")
        found.append(dialect)
    return tuple(found)
