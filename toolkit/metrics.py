"""The collector protocol, metric specs and samples, and the daemon's own metrics.

A collector is one module with one class (in `collectors/`). It declares which target
kinds and server flavors/versions it supports and the metrics it may emit (name, type,
help, labels); the exporter groups samples into families, adds the `target` label and
renders them. Declaring metrics up front gives the README reference, a stable contract,
and a check (in `validate_sample`) that a collector never emits an undeclared series.

A collector works in two steps: `read(conn)` queries the server and returns its facts, a
frozen dataclass of what it read (typed, NULL-safe); `samples(facts)` turns them into
samples without I/O. The exporter calls `collect(conn)`, the two in a row; checks call
`read` and use the facts, so no check reads a metric name back.

The core never imports `collectors/`: the composition root (`toolkit.app`) hands a
`Registry` of them to the exporter, the config and the docs, the way
prometheus/client_python hands a registry to its collectors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeVar

from toolkit.db.base import Connection, ServerInfo
from toolkit.db.version import Version

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


F = TypeVar("F")


class Collector(ABC, Generic[F]):
    """Base class of every collector, generic in its facts type `F`; subclasses set the
    class attributes and implement `read` and `samples`."""

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
    def read(self, conn: Connection) -> F:
        """Query `conn`: the facts this collector reports, as a frozen dataclass."""

    @abstractmethod
    def samples(self, facts: F) -> Iterable[Sample]:
        """The samples of the declared metrics the facts give (pure: no I/O)."""

    def collect(self, conn: Connection) -> Iterable[Sample]:
        """Read `conn`, then its samples: what the exporter calls on every scrape."""
        return self.samples(self.read(conn))

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


_KIND_ORDER = {"mysql": 0, "postgres": 1, "pgbouncer": 2}


AnyCollector = Collector[Any]
"""A collector of any facts type: what the registry, the exporter and the docs hold (they
only call `collect` and read the declarations, so the facts type does not matter there)."""


class Registry:
    """Every collector by name, ordered by kind then name; what config keys, `collect[]`
    filters and the metrics reference are checked against."""

    def __init__(self, collectors: Iterable[AnyCollector]) -> None:
        self.all: tuple[AnyCollector, ...] = tuple(
            sorted(collectors, key=lambda c: (_KIND_ORDER.get(c.kind, 9), c.name)))
        self._by_name = {c.name: c for c in self.all}
        if len(self._by_name) != len(self.all):
            raise RuntimeError("two collectors share a name")

    def __getitem__(self, name: str) -> AnyCollector:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[AnyCollector]:
        return iter(self.all)

    def for_kind(self, kind: str) -> list[AnyCollector]:
        """Every registered collector for a target kind (mysql, postgres, pgbouncer)."""
        return [c for c in self.all if c.kind == kind]

    def names(self, kind: str) -> frozenset[str]:
        return frozenset(c.name for c in self.for_kind(kind))

    def enabled(self, kind: str, names: Sequence[str] | None) -> list[AnyCollector]:
        """The configured list, or the kind's defaults when the config gives none."""
        if names is None:
            return [c for c in self.for_kind(kind) if c.default_enabled]
        return [self._by_name[n] for n in names
                if n in self._by_name and self._by_name[n].kind == kind]

    def specs(self) -> dict[str, MetricSpec]:
        """Every declared metric by its sample name."""
        return {spec.name: spec for c in self.all for spec in c.metrics}


# ----------------------------------------------------------------- the daemon's own

UP = MetricSpec("dbgauge_up", "gauge",
                "1 if dbgauge could connect to the target and identify it during this scrape, "
                "else 0.", ("target",))
COLLECTOR_SUCCESS = MetricSpec(
    "dbgauge_collector_success", "gauge",
    "1 if the collector ran to completion on the target during this scrape, else 0.",
    ("target", "collector"))
COLLECTOR_DURATION = MetricSpec(
    "dbgauge_collector_duration_seconds", "gauge",
    "Time the collector took on the target during this scrape.", ("target", "collector"))
SCRAPE_DURATION = MetricSpec(
    "dbgauge_target_scrape_duration_seconds", "gauge",
    "Time the whole target took during this scrape, connecting included.", ("target",))
TARGET_INFO = MetricSpec(
    "dbgauge_target_info", "info",
    "Server behind the target: kind, detected flavor and version (only while up).",
    ("target", "kind", "flavor", "version"))
BUILD_INFO = MetricSpec("dbgauge_build_info", "info",
                        "dbgauge version and the Python it runs on; always 1.",
                        ("version", "python_version"))
SELF_METRICS: tuple[MetricSpec, ...] = (UP, COLLECTOR_SUCCESS, COLLECTOR_DURATION,
                                        SCRAPE_DURATION, TARGET_INFO, BUILD_INFO)

JOB_SUCCESS = MetricSpec(
    "dbgauge_job_success", "gauge",
    "1 if the scheduled job's last run finished, else 0 (cached from the last run).", ("job",))
JOB_LAST_RUN = MetricSpec(
    "dbgauge_job_last_run_timestamp_seconds", "gauge",
    "Unix time the scheduled job's last run finished (0 before the first run).", ("job",))
JOB_DURATION = MetricSpec(
    "dbgauge_job_duration_seconds", "gauge",
    "How long the scheduled job's last run took (cached from the last run).", ("job",))
JOB_METRICS = (JOB_SUCCESS, JOB_LAST_RUN, JOB_DURATION)
