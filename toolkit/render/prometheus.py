"""The Prometheus exposition of a scrape: metric families, self metrics included.

Families are built fresh for every scrape (collect on scrape) and merged across
targets, so each family appears once in the output whatever the number of targets.
Which type and help a sample's family has comes from the specs the exporter was handed
(the collectors' declarations), the daemon's own and the jobs'.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Iterator, Mapping, Sequence

from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder

from toolkit import __version__
from toolkit.exporter.scrape import TargetResult
from toolkit.jobs import JobSnapshot
from toolkit.metrics import (
    BUILD_INFO,
    COLLECTOR_DURATION,
    COLLECTOR_SUCCESS,
    JOB_DURATION,
    JOB_LAST_RUN,
    JOB_METRICS,
    JOB_SUCCESS,
    SCRAPE_DURATION,
    SELF_METRICS,
    TARGET_INFO,
    UP,
    MetricSpec,
)

_SELF: dict[str, MetricSpec] = {s.name: s for s in (*SELF_METRICS, *JOB_METRICS)}


def _family(spec: MetricSpec) -> Metric:
    if spec.type == "counter":
        return Metric(spec.name.removesuffix("_total"), spec.help, "counter")
    return Metric(spec.name, spec.help, "gauge")


def build_families(results: Sequence[TargetResult], jobs: Sequence[JobSnapshot] = (),
                   specs: Mapping[str, MetricSpec] | None = None) -> list[Metric]:
    """Self metrics first, then every collector family that has samples, then the
    cached results of scheduled jobs; `specs` declares the collectors' families."""
    families: dict[str, Metric] = {}
    known = {**(specs or {}), **_SELF}
    for job in jobs:
        known.update({s.name: s for s in job.metrics})

    def add(name: str, labels: dict[str, str], value: float) -> None:
        family = families.get(name)
        if family is None:
            family = families[name] = _family(known[name])
        family.add_sample(name, labels, value)

    add(BUILD_INFO.name, {"version": __version__,
                          "python_version": platform.python_version()}, 1.0)
    for result in results:
        base = dict(result.labels)
        add(UP.name, base, 1.0 if result.up else 0.0)
        add(SCRAPE_DURATION.name, base, result.duration)
        if result.up and result.server is not None:
            add(TARGET_INFO.name, {**base, "kind": result.kind, "flavor": result.server.flavor,
                                   "version": result.server.version_text}, 1.0)
        for run in result.collectors:
            labels = {**base, "collector": run.collector}
            add(COLLECTOR_SUCCESS.name, labels, 1.0 if run.success else 0.0)
            add(COLLECTOR_DURATION.name, labels, run.duration)
    for result in results:
        for sample in result.samples:
            add(sample.name, dict(sample.labels), sample.value)
    for job in jobs:
        labels = {"job": job.name}
        add(JOB_SUCCESS.name, labels, 1.0 if job.success else 0.0)
        add(JOB_LAST_RUN.name, labels, job.last_run)
        add(JOB_DURATION.name, labels, job.duration)
        for cached in job.samples:
            add(cached.name, dict(cached.labels), cached.value)
    return list(families.values())


class _Snapshot:
    """The object prometheus_client's encoders expect: something with collect()."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def encode(results: Sequence[TargetResult], accept: str | None = None,
           jobs: Sequence[JobSnapshot] = (),
           specs: Mapping[str, MetricSpec] | None = None) -> tuple[bytes, str]:
    """Exposition bytes and content type, honouring the Accept header (OpenMetrics)."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(_Snapshot(build_families(results, jobs, specs))), content_type
