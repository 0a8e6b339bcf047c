"""The collector protocol, metric specs and samples, and the daemon's own metrics.

A collector is one module with one class (in `collectors/`). It declares which target
kinds and server flavors/versions it supports and the metrics it may emit (name, type,
help, labels) in one `MetricTable`; the exporter groups samples into families, adds the
`target` label and renders them. The table is the one declaration the registry, the README
reference, the spec check (`validate_sample`: a collector never emits an undeclared series)
and the collector's own `samples` read. Its entries are specs, or `Column`s: a family whose
value is one column of a row, scaled to base units (the way mysqld_exporter's scrapers pair
a Desc with the column it comes from).

A collector works in two steps: `read(conn)` queries the server and returns its facts, a
frozen dataclass of what it read (typed, NULL-safe); `samples(facts)` turns them into
samples without I/O. The exporter calls `collect(conn)`, the two in a row; checks read the
same facts through the collector module's `read_*` functions, so no check reads a metric
name back.

Two extensions keep that contract where a fixed list cannot: a collector may declare
`options` (a top-N limit, a file), set per target under `collector_options:` and checked
when the config loads; and a collector whose family names come from the server or the
operator (every SHOW GLOBAL STATUS variable, a queries.yaml file) declares
`dynamic_prefixes` and hands each such sample its own spec.

The core never imports `collectors/`: the composition root (`dbgauge.app`) hands a
`Registry` of them (`toolkit/registry.py`) to the exporter, the config and the docs, the way
prometheus/client_python hands a registry to its collectors.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from dbgauge.toolkit.db.base import Connection, ServerInfo
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.targets import TargetKind

# "untyped": for families whose type Prometheus' metadata cannot say: postgres_exporter's
# counters without `_total` (queries.yaml), and cumulative buckets carrying `le` outside a
# histogram (promtool reserves `le` for histograms); both would be flagged as counters.
# "histogram": a family whose samples are `<name>_bucket` (its labels and `le`),
# `<name>_sum` and `<name>_count` (postgres_exporter's HISTOGRAM columns).
MetricType = Literal["gauge", "counter", "info", "untyped", "histogram"]


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
        if self.type not in ("counter", "untyped", "histogram") and \
                self.name.endswith("_total"):
            raise ValueError(f"only counters may end in _total: {self.name}")
        if self.type == "info" and not self.name.endswith("_info"):
            raise ValueError(f"info metric {self.name} must end in _info")

    def sample_labels(self, sample: str) -> tuple[str, ...] | None:
        """The label names a sample named `sample` of this family carries; None when the
        family has no such sample (a histogram's are `_bucket` with `le`, `_sum`, `_count`)."""
        if self.type != "histogram":
            return self.labels if sample == self.name else None
        if sample == self.name + "_bucket":
            return (*self.labels, "le")
        return self.labels if sample in (self.name + "_sum", self.name + "_count") else None


@dataclass(frozen=True)
class Column:
    """A family whose value is one column of a row (or one status variable) times `scale`,
    the factor to base units (milliseconds to seconds: 0.001)."""

    spec: MetricSpec
    column: str
    scale: float = 1.0


class MetricTable:
    """A collector's metric table: every family it may emit, in the order the README lists
    them, looked up by sample name (a histogram's by `_bucket`, `_sum` and `_count` too);
    `columns` are the entries given as `Column`s and `column_names` the columns they read."""

    __slots__ = ("_parts", "_specs", "column_names", "columns")

    def __init__(self, *entries: MetricSpec | Column) -> None:
        self._specs: dict[str, MetricSpec] = {}
        for entry in entries:
            spec = entry.spec if isinstance(entry, Column) else entry
            if spec.name in self._specs:
                raise ValueError(f"{spec.name} is declared twice")
            self._specs[spec.name] = spec
        self._parts = {spec.name + part: spec for spec in self._specs.values()
                       if spec.type == "histogram" for part in ("_bucket", "_sum", "_count")}
        self.columns: tuple[Column, ...] = tuple(e for e in entries if isinstance(e, Column))
        self.column_names: tuple[str, ...] = tuple(c.column for c in self.columns)

    def __iter__(self) -> Iterator[MetricSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def get(self, name: str) -> MetricSpec | None:
        """The family of sample `name`."""
        return self._specs.get(name) or self._parts.get(name)

    def sample(self, spec: MetricSpec, value: float) -> Sample:
        """A sample of `spec`, a family named at run time: it carries its spec unless this
        table declares the name (a run-time spec never shadows a declared family)."""
        return Sample(spec.name, value, {}, None if spec.name in self._specs else spec)


_NO_LABELS: Mapping[str, str] = MappingProxyType({})


class Sample(NamedTuple):
    """One value of a declared metric; `spec` only for a family named at run time (see
    `Collector.dynamic_prefixes`). Immutable like the frozen dataclasses elsewhere, but a
    NamedTuple: a scrape makes one per series, and it is built in half the time."""

    name: str
    value: float
    labels: Mapping[str, str] = _NO_LABELS
    spec: MetricSpec | None = None


def present(values: Iterable[tuple[MetricSpec, float | None]],
            labels: Mapping[str, str] | None = None) -> Iterator[Sample]:
    """A sample per family whose value is known: None (NULL, a column or variable this
    server lacks) gives no series, never a made-up 0."""
    labels = {} if labels is None else labels
    for spec, value in values:
        if value is not None:
            yield Sample(spec.name, float(value), labels)


def column_samples(columns: Iterable[Column], values: Mapping[str, float],
                   labels: Mapping[str, str] | None = None) -> Iterator[Sample]:
    """A sample per column that `values` (read by column name) holds, in base units."""
    return present(((c.spec, None if (v := values.get(c.column)) is None else v * c.scale)
                    for c in columns), labels)


def state_set(spec: MetricSpec, label: str, states: Iterable[str], current: str,
              labels: Mapping[str, str] | None = None) -> Iterator[Sample]:
    """An enumeration as a state set: a sample per known state, 1 for `current` and 0 for
    the others, so an alert matches the state label whatever the state was before."""
    for state in states:
        yield Sample(spec.name, 1.0 if state == current else 0.0, {**(labels or {}), label: state})


OptionValue = int | str


@dataclass(frozen=True)
class Option:
    """One setting a collector accepts under `collector_options:`: an int within
    [minimum, maximum] (a top-N limit) or a string (a file path)."""

    default: OptionValue
    help: str
    minimum: int = 1
    maximum: int = 10_000

    def check(self, value: object) -> OptionValue:
        """`value` if it fits, else ValueError saying what would."""
        if isinstance(self.default, bool) or isinstance(value, bool):
            raise ValueError("booleans are not collector options")
        if isinstance(self.default, int):
            if not isinstance(value, int):
                raise ValueError(f"must be a whole number from {self.minimum} to {self.maximum}")
            if not self.minimum <= value <= self.maximum:
                raise ValueError(f"{value if abs(value) < 10**12 else 'that number'} is out of "
                                 f"range: use {self.minimum} to {self.maximum}")
            return value
        if not isinstance(value, str) or not value:
            raise ValueError("must be a non-empty string")
        return value


F = TypeVar("F")


class Collector(ABC, Generic[F]):
    """Base class of every collector, generic in its facts type `F`; subclasses set the
    class attributes and implement `read` and `samples`."""

    name: ClassVar[str]
    help: ClassVar[str]
    kind: ClassVar[TargetKind]
    flavors: ClassVar[frozenset[str]]
    min_versions: ClassVar[Mapping[str, Version]] = {}
    default_enabled: ClassVar[bool] = True
    metrics: ClassVar[MetricTable]
    # Families named at run time must start with one of these (`Sample.spec` describes them).
    dynamic_prefixes: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[Mapping[str, Option]] = {}
    # Seconds a successful collection is served again before the server is asked anew: for
    # families that change slowly (settings, sizes) and cost the server more than they tell
    # at every scrape; every collector takes the `refresh` option (0: every scrape).
    refresh: ClassVar[int] = 0
    _settings: Mapping[str, OptionValue] | None = None
    # (name, declared?, label names) -> spec of the samples validate_sample has passed
    _checked: dict[tuple[str, bool, tuple[str, ...]], MetricSpec] | None = None

    def setting(self, name: str) -> OptionValue:
        """This instance's value of option `name` (the default unless configured)."""
        settings = self._settings or {}
        return settings[name] if name in settings else self._options()[name].default

    def _options(self) -> Mapping[str, Option]:
        return _options_of(type(self))

    @property
    def refresh_seconds(self) -> float:
        """The `refresh` option: how long this collector's samples are reused."""
        return float(self.setting("refresh"))

    def check_options(self, given: Mapping[str, object]) -> dict[str, OptionValue]:
        """`given` checked against `options`; ValueError names the bad key and why."""
        out: dict[str, OptionValue] = {}
        options = self._options()
        for key, value in given.items():
            option = options.get(key)
            if option is None:
                known = ", ".join(sorted(options))
                raise ValueError(f"collector {self.name} has no option {key!r} "
                                 f"(its options: {known})")
            try:
                out[key] = option.check(value)
            except ValueError as exc:
                raise ValueError(f"{self.name}.{key}: {exc}") from None
        return out

    def configured(self, given: Mapping[str, object]) -> Collector[F]:
        """A copy of this collector with `given` options (self when there are none)."""
        if not given:
            return self
        clone = copy.copy(self)
        clone._settings = self.check_options(given)
        return clone

    def supports(self, server: ServerInfo) -> bool:
        """True when this server's flavor and version can answer the collector's SQL."""
        if server.flavor not in self.flavors:
            return False
        return server.version >= self.min_versions.get(server.flavor, ())

    @abstractmethod
    def read(self, conn: Connection) -> F:
        """Query `conn`: the facts this collector reports, as a frozen dataclass."""

    def read_for_dialects(self, conn: Connection) -> F:
        """The facts when only the dialects' samples are made from them (`compat_only`):
        `read`, unless a statement feeds only this collector's own families and can be
        left out (a peer's scrape should cost no more than the peer's)."""
        return self.read(conn)

    @abstractmethod
    def samples(self, facts: F) -> Iterable[Sample]:
        """The samples of the declared metrics the facts give (pure: no I/O)."""

    def incomplete(self, facts: F) -> str | None:
        """Why the facts are partial (a part the role could not read), or None: what
        `samples` raises Incomplete with after the samples that stand. The scrape asks it
        directly when it does not make this collector's samples (`compat_only`)."""
        return None

    def collect(self, conn: Connection) -> Iterable[Sample]:
        """Read `conn`, then its samples: what the exporter calls on every scrape."""
        return self.samples(self.read(conn))

    def validate_sample(self, sample: Sample) -> MetricSpec:
        """The sample's spec; raises ValueError on an undeclared name or label set. A name
        and label set checked once is not checked again (the same few thousand come back on
        every scrape, and checking each was a fifth of a scrape's CPU)."""
        key = (sample.name, sample.spec is None, tuple(sample.labels))
        checked = self._checked
        if checked is None:
            checked = self._checked = {}
        spec = checked.get(key)
        if spec is None:
            spec = checked[key] = self._check(sample)
        return sample.spec or spec

    def _check(self, sample: Sample) -> MetricSpec:
        if sample.spec is not None:
            spec = sample.spec
            if spec.sample_labels(sample.name) is None or not any(
                    sample.name.startswith(p) for p in self.dynamic_prefixes):
                raise ValueError(f"collector {self.name} emitted {sample.name} outside its "
                                 f"dynamic prefixes {list(self.dynamic_prefixes)}")
        else:
            declared = self.metrics.get(sample.name)
            if declared is None:
                raise ValueError(f"collector {self.name} emitted undeclared {sample.name}")
            spec = declared
        labels = sample.labels
        expected = spec.sample_labels(sample.name) or ()
        if len(labels) != len(expected) or not all(k in labels for k in expected):
            raise ValueError(
                f"collector {self.name}: {sample.name} has labels {sorted(sample.labels)}, "
                f"declared {list(expected)}"
            )
        return spec


@cache
def _options_of(cls: type[AnyCollector]) -> Mapping[str, Option]:
    """A collector class's options with the `refresh` every collector takes (built once per
    class: the scrape reads `refresh` for every collector it runs)."""
    return {**cls.options, "refresh": Option(
        cls.refresh, "seconds a collection is served again before the server is asked "
        "anew (0: every scrape)", minimum=0, maximum=86_400)}


AnyCollector = Collector[Any]
"""A collector of any facts type: what the registry, the exporter and the docs hold (they
only call `collect` and read the declarations, so the facts type does not matter there)."""


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
# python_version stays (as Go exporters' build_info carries goversion): /metrics is for the
# operator and may sit behind basic auth, while the Server header, sent to anyone (401s
# included), no longer names Python.
BUILD_INFO = MetricSpec("dbgauge_build_info", "info",
                        "dbgauge version and the Python it runs on; always 1.",
                        ("version", "python_version"))
# The names Prometheus and Alertmanager give their own (prometheus_config_last_reload_*):
# a SIGHUP with a broken config keeps the running one, and only these say so.
RELOAD_SUCCESS = MetricSpec(
    "dbgauge_config_last_reload_successful", "gauge",
    "1 if the last load of the config file (at start or on SIGHUP) succeeded, else 0: the "
    "daemon still runs the config it loaded before.")
RELOAD_SUCCESS_TIME = MetricSpec(
    "dbgauge_config_last_reload_success_timestamp_seconds", "gauge",
    "Unix time of the last successful load of the config file (at start or on SIGHUP).")
SELF_METRICS: tuple[MetricSpec, ...] = (UP, COLLECTOR_SUCCESS, COLLECTOR_DURATION,
                                        SCRAPE_DURATION, TARGET_INFO, BUILD_INFO,
                                        RELOAD_SUCCESS, RELOAD_SUCCESS_TIME)


@dataclass(frozen=True)
class ConfigLoad:
    """Whether the daemon's last load of its config succeeded, and when one last did."""

    successful: bool
    success_time: float

JOB_SUCCESS = MetricSpec(
    "dbgauge_job_success", "gauge",
    "1 if the scheduled job's last run finished, else 0 (cached from the last run).",
    ("dbgauge_job",))
JOB_LAST_RUN = MetricSpec(
    "dbgauge_job_last_run_timestamp_seconds", "gauge",
    "Unix time the scheduled job's last run finished (0 before the first run).", ("dbgauge_job",))
JOB_DURATION = MetricSpec(
    "dbgauge_job_duration_seconds", "gauge",
    "How long the scheduled job's last run took (cached from the last run).", ("dbgauge_job",))
JOB_METRICS = (JOB_SUCCESS, JOB_LAST_RUN, JOB_DURATION)
