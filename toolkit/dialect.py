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
peer says, and the renderer keeps its names exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.targets import TargetKind

Translate = Callable[[Any], Iterable[Sample]]


@dataclass(frozen=True)
class PeerSpec(MetricSpec):
    """A peer exporter's family as the peer declares it: its name, type and help are
    taken as they are (a counter need not end in `_total`)."""

    def __post_init__(self) -> None:
        pass


@dataclass(frozen=True)
class Dialect:
    """One peer exporter's names for one target kind.

    `translate` maps a collector name to a function from that collector's facts to the
    peer's samples; every sample carries its `PeerSpec` and a name starting with one of
    `prefixes`. `collectors` are the dbgauge collectors the peer's default set needs,
    run on a target that has the dialect on and no `collectors:` list of its own.
    """

    name: str
    kind: TargetKind
    help: str
    up: PeerSpec
    prefixes: tuple[str, ...]
    translate: Mapping[str, Translate] = field(default_factory=dict)
    collectors: tuple[str, ...] = ()

    def samples(self, collector: str, facts: object) -> Iterable[Sample]:
        """The peer's samples of one collector's facts (none if the peer has no such
        data)."""
        translate = self.translate.get(collector)
        return () if translate is None else translate(facts)

    def validate_sample(self, sample: Sample) -> MetricSpec:
        """The sample's spec; ValueError when it has none, a name outside the dialect's
        prefixes, or labels other than its spec's."""
        spec = sample.spec
        if spec is None or spec.name != sample.name or not sample.name.startswith(
                self.prefixes):
            raise ValueError(f"dialect {self.name} emitted {sample.name} without its spec "
                             f"or outside its prefixes {list(self.prefixes)}")
        if len(sample.labels) != len(spec.labels) or not all(
                k in sample.labels for k in spec.labels):
            raise ValueError(f"dialect {self.name}: {sample.name} has labels "
                             f"{sorted(sample.labels)}, declared {list(spec.labels)}")
        return spec


def dialect_names(dialects: Iterable[Dialect]) -> Mapping[str, str]:
    """Dialect name -> target kind (what the config is checked against)."""
    return {d.name: d.kind for d in dialects}
