"""The collector registry: name -> collector, default on/off, per target kind.

Config keys (`targets[].collectors`) and `/probe?collect[]=` filters are checked
against this registry; the README's metrics reference is generated from it.
"""

from __future__ import annotations

from collectors.base import Collector, MetricSpec, Sample
from collectors.mysql_status import MySQLStatus
from collectors.pgbouncer_lists import PgBouncerLists
from collectors.postgres_database import PostgresDatabase

ALL: tuple[Collector, ...] = (MySQLStatus(), PostgresDatabase(), PgBouncerLists())
REGISTRY: dict[str, Collector] = {c.name: c for c in ALL}

__all__ = ["ALL", "REGISTRY", "Collector", "MetricSpec", "Sample", "collectors_for_kind",
           "enabled_collectors"]


def collectors_for_kind(kind: str) -> list[Collector]:
    """Every registered collector for a target kind (mysql, postgres, pgbouncer)."""
    return [c for c in ALL if c.kind == kind]


def enabled_collectors(kind: str, names: list[str] | None) -> list[Collector]:
    """The configured list, or the kind's defaults when the config gives none."""
    if names is None:
        return [c for c in collectors_for_kind(kind) if c.default_enabled]
    return [REGISTRY[n] for n in names if n in REGISTRY and REGISTRY[n].kind == kind]
