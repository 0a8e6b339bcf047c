"""The registry: every collector by name and the dialects, handed to the core by the
composition root (`dbgauge.app`), as prometheus/client_python hands a registry to its
collectors; what the config, `collect[]` filters, the scrape and the docs look names up in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from dbgauge.toolkit.dialect import Dialect
from dbgauge.toolkit.metrics import AnyCollector, MetricSpec
from dbgauge.toolkit.targets import KINDS, Target

_KIND_ORDER = {kind: i for i, kind in enumerate(KINDS)}


class Registry:
    """Every collector by name, ordered by kind then name, and the dialects that speak
    peer exporters' names; what config keys, `collect[]` filters and the metrics reference
    are checked against."""

    def __init__(self, collectors: Iterable[AnyCollector],
                 dialects: Iterable[Dialect] = ()) -> None:
        self.all: tuple[AnyCollector, ...] = tuple(
            sorted(collectors, key=lambda c: (_KIND_ORDER.get(c.kind, 9), c.name)))
        self._by_name = {c.name: c for c in self.all}
        self._specs: dict[str, MetricSpec] | None = None
        self.dialects: dict[str, Dialect] = {d.name: d for d in dialects}
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

    def enabled(self, kind: str, names: Sequence[str] | None,
                options: Mapping[str, Mapping[str, object]] | None = None
                ) -> list[AnyCollector]:
        """The configured list, or the kind's defaults when the config gives none, each
        with its `options` (already checked when the config loaded)."""
        if names is None:
            chosen = [c for c in self.for_kind(kind) if c.default_enabled]
        else:
            chosen = [self._by_name[n] for n in names
                      if n in self._by_name and self._by_name[n].kind == kind]
        options = options or {}
        return [c.configured(options.get(c.name, {})) for c in chosen]

    def for_target(self, target: Target) -> list[AnyCollector]:
        """The collectors `target` runs, configured with its options: its own list, or
        the kind's defaults plus what its dialects' peers collect by default."""
        names: Sequence[str] | None = target.collectors
        if names is None and (extra := [n for d in self.dialects_for(target)
                                        for n in d.collectors]):
            defaults = [] if target.compat_only else [
                c.name for c in self.for_kind(target.kind) if c.default_enabled]
            names = [c.name for c in self.for_kind(target.kind)
                     if c.name in defaults or c.name in extra]
        return self.enabled(target.kind, names, target.collector_options)

    def dialects_for(self, target: Target) -> list[Dialect]:
        """The dialects `target` speaks: those of its `compat` list of its kind."""
        return [d for name in target.compat if (d := self.dialects.get(name)) is not None
                and d.kind == target.kind]

    def specs(self) -> Mapping[str, MetricSpec]:
        """Every declared metric by its sample name (built once: every scrape asks)."""
        if self._specs is None:
            self._specs = {name: spec for c in self.all for spec in c.metrics
                           for name in _sample_names(spec)}
        return self._specs


def _sample_names(spec: MetricSpec) -> tuple[str, ...]:
    """The names a family's samples carry: its own, a histogram's `_bucket`, `_sum` and
    `_count` too (the renderer finds the family by any of them)."""
    if spec.type != "histogram":
        return (spec.name,)
    return (spec.name, *(spec.name + part for part in ("_bucket", "_sum", "_count")))
