"""The Prometheus exposition of a scrape: metric families, self metrics included.

Families are built fresh for every scrape (collect on scrape) and merged across
targets, so each family appears once in the output whatever the number of targets.
Which type and help a sample's family has comes from the specs the exporter was handed
(the collectors' declarations), the daemon's own and the jobs'.

The text format (what Prometheus asks for unless it asks for OpenMetrics) is written here
directly: a scrape of a MySQL server has over a thousand samples, and going through
prometheus_client's Metric objects and generic encoder cost more CPU than the queries.
OpenMetrics still goes through prometheus_client's encoder.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Iterable, Iterator, Mapping, Sequence

from prometheus_client import ProcessCollector
from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder

from dbgauge.toolkit import __version__
from dbgauge.toolkit.exporter.scrape import TargetResult
from dbgauge.toolkit.jobs import JobSnapshot
from dbgauge.toolkit.metrics import (
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
Labels = tuple[tuple[str, str], ...]


class Family:
    """One family's samples in the order they came: (labels sorted by name, value)."""

    __slots__ = ("samples", "spec")

    def __init__(self, spec: MetricSpec) -> None:
        self.spec = spec
        self.samples: list[tuple[Labels, float]] = []


def build_families(results: Sequence[TargetResult], jobs: Sequence[JobSnapshot] = (),
                   specs: Mapping[str, MetricSpec] | None = None) -> list[Family]:
    """Self metrics first, then every collector family that has samples, then the
    cached results of scheduled jobs; `specs` declares the collectors' families."""
    families: dict[str, Family] = {}
    known = {**(specs or {}), **_SELF}
    for job in jobs:
        known.update({s.name: s for s in job.metrics})

    def add(name: str, labels: Labels, value: float, spec: MetricSpec | None = None) -> None:
        family = families.get(name)
        if family is None:
            if spec is not None and name in known:
                return  # a family named at run time never shadows a declared one
            family = families[name] = Family(spec or known[name])
        elif spec is not None and family.spec is not spec and name in known:
            return
        family.samples.append((labels, value))

    add(BUILD_INFO.name, (("python_version", platform.python_version()),
                          ("version", __version__)), 1.0)
    for result in results:
        base = result.labels
        add(UP.name, base, 1.0 if result.up else 0.0)
        add(SCRAPE_DURATION.name, base, result.duration)
        if result.up and result.server is not None:
            add(TARGET_INFO.name, tuple(sorted((*base, ("kind", result.kind),
                                                ("flavor", result.server.flavor),
                                                ("version", result.server.version_text)))),
                1.0)
        for run in result.collectors:
            labels = tuple(sorted((*base, ("collector", run.collector))))
            add(COLLECTOR_SUCCESS.name, labels, 1.0 if run.success else 0.0)
            add(COLLECTOR_DURATION.name, labels, run.duration)
    for result in results:
        for sample in result.samples:
            add(sample.name, sample.labels, sample.value, sample.spec)
    for job in jobs:
        labels = (("dbgauge_job", job.name),)
        add(JOB_SUCCESS.name, labels, 1.0 if job.success else 0.0)
        add(JOB_LAST_RUN.name, labels, job.last_run)
        add(JOB_DURATION.name, labels, job.duration)
        for cached in job.samples:
            add(cached.name, tuple(sorted(cached.labels.items())), cached.value)
    return list(families.values())


# prometheus_client's process metrics (read from /proc on each scrape), registered nowhere.
_PROCESS = ProcessCollector(registry=None)


def _metric(family: Family) -> Metric:
    """The family as prometheus_client's Metric (for the OpenMetrics encoder)."""
    spec = family.spec
    if spec.type == "counter":
        metric = Metric(spec.name.removesuffix("_total"), spec.help, "counter")
    else:
        metric = Metric(spec.name, spec.help, "untyped" if spec.type == "untyped" else "gauge")
    for labels, value in family.samples:
        metric.add_sample(spec.name, dict(labels), value)
    return metric


class _Snapshot:
    """The object prometheus_client's encoders expect: something with collect()."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def _number(value: float) -> str:
    """A value as Go (and prometheus_client) prints it: +Inf, NaN, 1e+06 past six digits."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(float(value))
    dot = text.find(".")
    if value > 0 and dot > 6:  # Go switches to exponents sooner than Python
        mantissa = f"{text[0]}.{text[1:dot]}{text[dot + 1:]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return text


def _escape(value: str) -> str:
    if "\\" in value or "\n" in value or '"' in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')
    return value


def _lines(name: str, type_: str, help_: str,
           samples: Iterable[tuple[str, Labels, float]],
           rendered: dict[Labels, str]) -> Iterator[str]:
    """HELP, TYPE and sample lines; `rendered` caches each label set's `{...}` text (the
    same target labels recur on most samples of a scrape)."""
    escaped = help_.replace("\\", r"\\").replace("\n", r"\n")
    yield f"# HELP {name} {escaped}\n"
    yield f"# TYPE {name} {type_}\n"
    for sample_name, labels, value in samples:
        text = rendered.get(labels)
        if text is None:
            text = rendered[labels] = "{" + ",".join(
                f'{k}="{_escape(v)}"' for k, v in labels) + "}" if labels else ""
        yield f"{sample_name}{text} {_number(value)}\n"


def render_text(families: Sequence[Family], process: Iterable[Metric] = ()) -> bytes:
    """The text exposition format 0.0.4, as prometheus_client writes it."""
    out: list[str] = []
    rendered: dict[Labels, str] = {}
    for family in families:
        spec = family.spec
        type_ = spec.type if spec.type in ("counter", "untyped") else "gauge"
        out.extend(_lines(spec.name, type_, spec.help,
                          ((spec.name, labels, value) for labels, value in family.samples),
                          rendered))
    for metric in process:
        name = metric.name + "_total" if metric.type == "counter" else metric.name
        out.extend(_lines(name, metric.type, metric.documentation,
                          ((s.name, tuple(sorted(s.labels.items())), s.value)
                           for s in metric.samples), rendered))
    return "".join(out).encode()


def encode(results: Sequence[TargetResult], accept: str | None = None,
           jobs: Sequence[JobSnapshot] = (),
           specs: Mapping[str, MetricSpec] | None = None,
           process: bool = False) -> tuple[bytes, str]:
    """Exposition bytes and content type, honouring the Accept header (OpenMetrics).
    `process` adds the daemon's own process_* families (CPU, memory, fds, start time)."""
    families = build_families(results, jobs, specs)
    extra = list(_PROCESS.collect()) if process else []
    encoder, content_type = choose_encoder(accept or "")
    if content_type.startswith("text/plain"):  # the classic text format, written here
        return render_text(families, extra), content_type
    return encoder(_Snapshot([*map(_metric, families), *extra])), content_type
