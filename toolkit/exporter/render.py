"""Turn scrape results into Prometheus metric families, self metrics included.

Families are built fresh for every scrape (collect on scrape) and merged across
targets, so each family appears once in the output whatever the number of targets.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Iterator, Sequence

from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder

from collectors import ALL, MetricSpec
from toolkit import __version__
from toolkit.exporter.scrape import TargetResult
from toolkit.jobs import JOB_DURATION, JOB_LAST_RUN, JOB_METRICS, JOB_SUCCESS, JobSnapshot

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
_SPECS: dict[str, MetricSpec] = {s.name: s for s in SELF_METRICS}
for _collector in ALL:
    for _spec in _collector.metrics:
        _SPECS[_spec.name] = _spec


def _family(spec: MetricSpec) -> Metric:
    if spec.type == "counter":
        return Metric(spec.name.removesuffix("_total"), spec.help, "counter")
    return Metric(spec.name, spec.help, "gauge")


def build_families(results: Sequence[TargetResult],
                   jobs: Sequence[JobSnapshot] = ()) -> list[Metric]:
    """Self metrics first, then every collector family that has samples, then the
    cached results of scheduled jobs."""
    families: dict[str, Metric] = {}
    specs = dict(_SPECS)
    for job in jobs:
        specs.update({s.name: s for s in (*JOB_METRICS, *job.metrics)})

    def add(name: str, labels: dict[str, str], value: float) -> None:
        family = families.get(name)
        if family is None:
            family = families[name] = _family(specs[name])
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
           jobs: Sequence[JobSnapshot] = ()) -> tuple[bytes, str]:
    """Exposition bytes and content type, honouring the Accept header (OpenMetrics)."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(_Snapshot(build_families(results, jobs))), content_type
