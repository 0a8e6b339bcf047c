"""The reference for dbgauge's exposition writer (toolkit/render/prometheus.py):
prometheus_client's own encoders, fed the same families through its Metric objects."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder

from dbgauge.toolkit.render.prometheus import Family


def _metric(family: Family) -> Metric:
    """The family as prometheus_client's Metric."""
    spec = family.spec
    if spec.type == "counter":
        metric = Metric(spec.name.removesuffix("_total"), spec.help, "counter")
    else:
        metric = Metric(spec.name, spec.help, spec.type if spec.type in (
            "untyped", "histogram") else "gauge")
    for name, labels, value in family.named():
        metric.add_sample(name, dict(labels), value)
    return metric


class _Snapshot:
    """The object prometheus_client's encoders expect: something with collect()."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def reference(families: Sequence[Family], process: Sequence[Metric] = (),
              accept: str | None = None) -> tuple[bytes, str]:
    """What prometheus_client writes for these families (and process metrics), in the
    format it negotiates for `accept`, and the content type."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(_Snapshot([*map(_metric, families), *process])), content_type  # type: ignore[arg-type]
