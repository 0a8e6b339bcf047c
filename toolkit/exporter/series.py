"""What a scrape makes of each sample: its labels merged with the target's, checked once.

The same series come back on every scrape, so what a sample's name and labels resolve to
(its labels with the target's, sorted; a dialect's spec) is worked out the first time and
looked up after that. The lookup is by label set, then by name: a collector yields many
samples with one labels mapping (a database's thirty counters), whose items are read once
for all of them, and a name is a string whose hash Python keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from dbgauge.toolkit.metrics import MetricSpec, Sample

Labels = tuple[tuple[str, str], ...]
# a sample -> its labels with the target's, sorted, and its spec (None: the sample's own)
Resolve = Callable[[Sample], tuple[Labels, MetricSpec | None]]
LIMIT = 100_000  # series remembered per target; past that, forgotten and worked out again


class SampleOut(NamedTuple):
    """A sample ready to render: labels (sorted by name) already include `target` and the
    target's extra labels. A NamedTuple, as `Sample` is: one per series per scrape."""

    name: str
    labels: Labels
    value: float
    spec: MetricSpec | None = None  # only for a family named at run time


class SeriesMemo:
    """label items -> sample name -> what `resolve` made of them."""

    __slots__ = ("_by_labels", "_size")

    def __init__(self) -> None:
        self._by_labels: dict[Labels, dict[str, tuple[Labels, MetricSpec | None]]] = {}
        self._size = 0

    def extend(self, out: list[SampleOut], samples: Iterable[Sample], resolve: Resolve
               ) -> None:
        """Append each sample, resolved (by `resolve` the first time it is seen)."""
        seen: Mapping[str, str] | None = None
        names: dict[str, tuple[Labels, MetricSpec | None]] = {}
        for sample in samples:
            if sample.labels is not seen:
                seen = sample.labels
                names = self._names(tuple(seen.items()))
            hit = names.get(sample.name)
            if hit is None:
                if self._size >= LIMIT:
                    self._by_labels.clear()
                    self._size = 0
                    names = self._names(tuple(seen.items()))
                hit = names[sample.name] = resolve(sample)
                self._size += 1
            out.append(SampleOut(sample.name, hit[0], sample.value,
                                 sample.spec if hit[1] is None else hit[1]))

    def _names(self, items: Labels) -> dict[str, tuple[Labels, MetricSpec | None]]:
        names = self._by_labels.get(items)
        if names is None:
            names = self._by_labels[items] = {}
        return names
