"""The collector protocol: each collector declares its metrics and yields samples.

A collector is one module with one class. It declares which target kinds and server
flavors/versions it supports and the metrics it may emit (name, type, help, labels);
the exporter groups samples into families, adds the `target` label and renders them.
Declaring metrics up front gives the README reference, a stable contract, and a
check (in `validate_sample`) that a collector never emits an undeclared series.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from toolkit.db import Connection, ServerInfo
from toolkit.sql import Version

MetricType = Literal["gauge", "counter", "info"]


@dataclass(frozen=True)
class MetricSpec:
    """One metric family: `name` is the exposed sample name (counters end in _total,
    info metrics in _info and always have the value 1)."""

    name: str
    type: MetricType
    help: str
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type == "counter" and not self.name.endswith("_total"):
            raise ValueError(f"counter {self.name} must end in _total")
        if self.type != "counter" and self.name.endswith("_total"):
            raise ValueError(f"only counters may end in _total: {self.name}")
        if self.type == "info" and not self.name.endswith("_info"):
            raise ValueError(f"info metric {self.name} must end in _info")


@dataclass(frozen=True)
class Sample:
    """One value of a declared metric."""

    name: str
    value: float
    labels: Mapping[str, str] = field(default_factory=dict)


class Collector(ABC):
    """Base class of every collector; subclasses set the class attributes."""

    name: ClassVar[str]
    help: ClassVar[str]
    kind: ClassVar[Literal["mysql", "postgres", "pgbouncer"]]
    flavors: ClassVar[frozenset[str]]
    min_versions: ClassVar[Mapping[str, Version]] = {}
    default_enabled: ClassVar[bool] = True
    metrics: ClassVar[tuple[MetricSpec, ...]]
    _specs: dict[str, MetricSpec] | None = None

    def supports(self, server: ServerInfo) -> bool:
        """True when this server's flavor and version can answer the collector's SQL."""
        if server.flavor not in self.flavors:
            return False
        return server.version >= self.min_versions.get(server.flavor, ())

    @abstractmethod
    def collect(self, conn: Connection) -> Iterable[Sample]:
        """Query `conn` and yield samples of the declared metrics."""

    def spec(self, name: str) -> MetricSpec:
        specs: dict[str, MetricSpec] | None = getattr(self, "_specs", None)
        if specs is None:  # built once per collector: it is looked up for every sample
            specs = {s.name: s for s in self.metrics}
            self._specs = specs
        return specs[name]

    def validate_sample(self, sample: Sample) -> MetricSpec:
        """The sample's spec; raises ValueError on an undeclared name or label set."""
        try:
            spec = self.spec(sample.name)
        except KeyError:
            raise ValueError(f"collector {self.name} emitted undeclared {sample.name}") from None
        if tuple(sorted(sample.labels)) != tuple(sorted(spec.labels)):
            raise ValueError(
                f"collector {self.name}: {sample.name} has labels {sorted(sample.labels)}, "
                f"declared {list(spec.labels)}"
            )
        return spec


def number(value: object) -> float | None:
    """A server value as float, or None when it is NULL or not numeric."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
