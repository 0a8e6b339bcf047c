"""Dialects: a peer exporter's metric names, spoken beside dbgauge's own.

An operator who replaces mysqld_exporter, postgres_exporter or pgbouncer_exporter keeps
dashboards and alerts that query the peer's names, labels and value semantics. A dialect
re-expresses the facts dbgauge's collectors already read (no second query) as the peer's
series: for each collector it maps, a pure function from that collector's facts to samples
of the peer's families. It also names the peer's `up` family, which is 1 or 0 for every
target of its kind whether or not it answered, and the collectors the peer runs by default
(added to a target's defaults when the dialect is on).

Dialects live beside the collectors they map (`collectors/dialects/`); the composition root
hands them to the registry with the collectors, so the core imports none of them.

The peer's families are not held to dbgauge's naming rules (postgres_exporter's counters
lack `_total`, mysqld_exporter exports status variables untyped): a `PeerSpec` says what the
peer says, and the renderer keeps its names exact. A peer's histogram is one `PeerSpec` of
type "histogram" whose samples are named `<name>_bucket` (with `le`), `<name>_sum` and
`<name>_count`.

The peers also count their own scrapes (`pg_exporter_scrapes_total`,
`mysql_exporter_last_scrape_error`, a duration per scraper): a dialect's `self_samples`
makes those samples from the `ScrapeStats` of the target's scrape, after its collectors ran
(or when the target could not be reached).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.targets import Target, TargetKind

Translate = Callable[[Any], Iterable[Sample]]
HISTOGRAM_PARTS = ("_bucket", "_sum", "_count")
TargetLabels = Callable[[Target], Mapping[str, str]]


def _no_labels(_target: Target) -> Mapping[str, str]:
    return {}


@dataclass(frozen=True)
class PeerSpec(MetricSpec):
    """A peer exporter's family as the peer declares it: its name, type and help are
    taken as they are (a counter need not end in `_total`)."""

    def __post_init__(self) -> None:
        pass


@dataclass(frozen=True)
class PeerFamily:
    """One family the peer exports: its spec (a name with a `*` stands for the families
    named at run time that way, e.g. `mysql_global_status_*`, or
    `mysql_info_schema_innodb_metrics_*_total` beside `..._innodb_metrics_*` when the type
    follows the suffix; the pattern with the longest fixed part wins), the dbgauge family
    with the same data (`ours`, for the rename table of docs/compat.md; "" when dbgauge's
    own names have no counterpart), and where dbgauge's value deliberately differs (`note`)."""

    spec: PeerSpec
    ours: str = ""
    note: str = ""


class PeerFamilies:
    """A dialect's families, looked up by sample name: what translations make samples
    with, what the scrape checks their samples against, and what the docs list."""

    __slots__ = ("_checked", "_dynamic", "_made", "_parts", "_static", "all")

    def __init__(self, *families: PeerFamily) -> None:
        self.all: tuple[PeerFamily, ...] = families
        self._static = {f.spec.name: f.spec for f in families if "*" not in f.spec.name}
        # a histogram's sample names -> its spec
        self._parts = {f.spec.name + part: f.spec for f in families
                       if f.spec.type == "histogram" for part in HISTOGRAM_PARTS}
        dynamic: list[tuple[str, str, PeerSpec]] = []
        for f in families:
            if "*" in f.spec.name:
                prefix, suffix = f.spec.name.split("*", 1)
                dynamic.append((prefix, suffix, f.spec))
        self._dynamic = tuple(sorted(dynamic, key=lambda d: -len(d[0]) - len(d[1])))
        if len(self._static) + len(self._dynamic) != len(families):
            raise ValueError("a peer family is declared twice")
        self._made: dict[str, PeerSpec] = {}
        # (sample name, label names) already found valid -> the family's spec
        self._checked: dict[tuple[str, tuple[str, ...]], PeerSpec] = {}

    def spec(self, name: str) -> PeerSpec:
        """The spec of the family `name`; KeyError when the dialect does not declare it."""
        found = self._static.get(name) or self._parts.get(name) or self._made.get(name)
        if found is not None:
            return found
        for prefix, suffix, pattern in self._dynamic:
            if name.startswith(prefix) and name.endswith(suffix) \
                    and len(name) > len(prefix) + len(suffix):
                made = self._made[name] = PeerSpec(name, pattern.type, pattern.help,
                                                   pattern.labels)
                return made
        raise KeyError(name)

    def sample(self, name: str, value: float,
               labels: Mapping[str, str] | None = None) -> Sample:
        """A sample of the declared family `name`, carrying its spec."""
        return Sample(name, value, labels or {}, self.spec(name))

    def check(self, sample: Sample) -> PeerSpec:
        """The spec of the family `sample` belongs to; KeyError when no family is declared
        for its name, ValueError when its label names are not the family's (a histogram's
        `_bucket` adds `le`). Remembered per name and label names: a scrape checks every
        sample."""
        key = (sample.name, tuple(sample.labels))
        found = self._checked.get(key)
        if found is not None:
            return found
        spec = self.spec(sample.name)
        labels = spec.labels
        if spec.type == "histogram" and sample.name == spec.name + "_bucket":
            labels = (*labels, "le")
        elif spec.type == "histogram" and sample.name == spec.name:
            raise ValueError(f"histogram {spec.name} takes {'/'.join(HISTOGRAM_PARTS)} "
                             "samples")
        if len(sample.labels) != len(labels) or not all(k in sample.labels for k in labels):
            raise ValueError(f"{sample.name} has labels {sorted(sample.labels)}, declared "
                             f"{list(labels)}")
        self._checked[key] = spec
        return spec


@dataclass(frozen=True)
class ScrapeStats:
    """How one scrape of one target went, for the peer's self metrics (postgres_exporter's
    pg_exporter_*, mysqld_exporter's mysql_exporter_*): its duration so far, whether it
    failed, how many scrapes the target had (this one included), each collector's (name,
    success, seconds), whether the target answered, the time spent (re)connecting (0 on a
    kept connection), and the failed runs per collector since the runner started."""

    duration: float
    error: bool
    scrapes: int
    collectors: tuple[tuple[str, bool, float], ...] = ()
    up: bool = True
    connect_seconds: float = 0.0
    failures: Mapping[str, int] = field(default_factory=dict)


SelfSamples = Callable[[ScrapeStats], Iterable[Sample]]


@dataclass(frozen=True)
class Dialect:
    """One peer exporter's names for one target kind.

    `translate` maps a collector name to a function from that collector's facts to the
    peer's samples, made with `families.sample`. `collectors` are the dbgauge collectors
    the peer's default set needs, run on a target that has the dialect on and no
    `collectors:` list of its own. `scrape`, when set, makes the peer's own scrape
    families (scrape counts, errors, durations) once per scrape of a target, up or not.
    """

    name: str
    kind: TargetKind
    help: str
    up: PeerSpec
    families: PeerFamilies
    translate: Mapping[str, Translate] = field(default_factory=dict)
    collectors: tuple[str, ...] = ()
    # Labels the peer derives from its connection settings rather than from the server's
    # answers (postgres_exporter's `server`, the DSN's host:port): computed once per
    # target and added to each sample whose family declares them and lacks them.
    target_labels: TargetLabels = _no_labels
    # The peer's metrics about its own scrape, made at the end of each scrape of the
    # target, answered or not.
    self_samples: SelfSamples | None = None

    def samples(self, collector: str, facts: object) -> Iterable[Sample]:
        """The peer's samples of one collector's facts (none if the peer has no such
        data)."""
        translate = self.translate.get(collector)
        return () if translate is None else translate(facts)

    def resolve(self, sample: Sample, constant: Mapping[str, str]
                ) -> tuple[Mapping[str, str], MetricSpec]:
        """The sample's labels with the `constant` ones (from `target_labels`) its family
        declares and it lacks, and its spec; ValueError as `validate_sample`. The scrape
        remembers the answer per sample name and labels."""
        try:
            declared = self.families.spec(sample.name).labels
        except KeyError:
            declared = ()  # validate_sample says what is wrong
        added = {k: v for k, v in constant.items() if k in declared and k not in sample.labels}
        if added:
            sample = Sample(sample.name, sample.value, {**sample.labels, **added}, sample.spec)
        return sample.labels, self.validate_sample(sample)

    def validate_sample(self, sample: Sample) -> MetricSpec:
        """The sample's spec; ValueError when the dialect does not declare its family or
        its labels differ from the family's."""
        try:
            return self.families.check(sample)
        except KeyError:
            raise ValueError(f"dialect {self.name} emitted undeclared {sample.name}") from None
        except ValueError as exc:
            raise ValueError(f"dialect {self.name}: {exc}") from None
