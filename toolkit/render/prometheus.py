"""The Prometheus exposition of a scrape: metric families, self metrics included.

Families are built fresh for every scrape (collect on scrape) and merged across
targets, so each family appears once in the output whatever the number of targets.
Which type and help a sample's family has comes from the specs the exporter was handed
(the collectors' declarations), the daemon's own and the jobs'.

Both formats are written here, by one writer: the text format 0.0.4 (what Prometheus asks
for unless it asks for OpenMetrics) and OpenMetrics 1.0. Their sample lines are the same;
only the family's HELP/TYPE lines and the closing `# EOF` differ (and the names, when an
OpenMetrics scraper asks for `dots` escaping). A scrape of a MySQL
server has over a thousand samples, and going through prometheus_client's Metric objects
and generic encoders cost more CPU than the queries; prometheus_client still negotiates
the content type and reads the process metrics, and its encoders are the tests' reference
for the bytes.
"""

from __future__ import annotations

import math
import platform
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

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
    RELOAD_SUCCESS,
    RELOAD_SUCCESS_TIME,
    SCRAPE_DURATION,
    SELF_METRICS,
    TARGET_INFO,
    UP,
    ConfigLoad,
    MetricSpec,
)

_SELF: dict[str, MetricSpec] = {s.name: s for s in (*SELF_METRICS, *JOB_METRICS)}
Labels = tuple[tuple[str, str], ...]
Samples = Iterable[tuple[str, Labels, float]]  # (sample name, labels, value)


class Family:
    """One family's samples in the order they came: (labels sorted by name, value); a
    histogram's also keep each sample's name (`_bucket`, `_sum`, `_count`) in `names`."""

    __slots__ = ("names", "samples", "spec")

    def __init__(self, spec: MetricSpec) -> None:
        self.spec = spec
        self.samples: list[tuple[Labels, float]] = []
        self.names: list[str] | None = [] if spec.type == "histogram" else None

    def named(self) -> Iterator[tuple[str, Labels, float]]:
        """(sample name, labels, value) of every sample."""
        if self.names is None:
            return ((self.spec.name, labels, value) for labels, value in self.samples)
        return ((name, labels, value) for name, (labels, value) in zip(
            self.names, self.samples, strict=True))


def build_families(results: Sequence[TargetResult], jobs: Sequence[JobSnapshot] = (),
                   specs: Mapping[str, MetricSpec] | None = None,
                   config: ConfigLoad | None = None) -> list[Family]:
    """Self metrics first (with `config`, the daemon's last config load), then every
    collector family that has samples, then the cached results of scheduled jobs; `specs`
    declares the collectors' families."""
    families: dict[str, Family] = {}
    known = {**(specs or {}), **_SELF}
    for job in jobs:
        known.update({s.name: s for s in job.metrics})

    def add(name: str, labels: Labels, value: float, spec: MetricSpec | None = None) -> None:
        declared = spec if spec is not None else known.get(name)
        key = declared.name if declared is not None and declared.type == "histogram" else name
        family = families.get(key)
        if family is None:
            if spec is not None and key in known:
                return  # a family named at run time never shadows a declared one
            family = families[key] = Family(spec or known[key])
        elif spec is not None and family.spec is not spec and key in known:
            return
        family.samples.append((labels, value))
        if family.names is not None:
            family.names.append(name)

    add(BUILD_INFO.name, (("python_version", platform.python_version()),
                          ("version", __version__)), 1.0)
    if config is not None:
        add(RELOAD_SUCCESS.name, (), 1.0 if config.successful else 0.0)
        add(RELOAD_SUCCESS_TIME.name, (), config.success_time)
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
    _peer_families(results, add)
    for job in jobs:
        labels = (("dbgauge_job", job.name),)
        add(JOB_SUCCESS.name, labels, 1.0 if job.success else 0.0)
        add(JOB_LAST_RUN.name, labels, job.last_run)
        add(JOB_DURATION.name, labels, job.duration)
        for cached in job.samples:
            add(cached.name, tuple(sorted(cached.labels.items())), cached.value)
    return list(families.values())


def _peer_families(results: Sequence[TargetResult],
                   add: Callable[[str, Labels, float, MetricSpec | None], None]) -> None:
    """The peer exporters' series (dialects), with the peer's labels only, as a peer
    scraped per target gives them; when several targets speak the same dialect in one
    scrape (/metrics of a multi-target config), each of them also carries `target`, or
    their series would collide."""
    speaking = [r for r in results if r.peer_up]
    per_dialect = Counter(up.name for r in speaking for up in r.peer_up)
    for result in speaking:
        several = any(per_dialect[up.name] > 1 for up in result.peer_up)
        extra = (("target", result.target),) if several else ()
        base = tuple(sorted((*(kv for kv in result.labels if kv[0] != "target"), *extra)))
        for up in result.peer_up:
            add(up.name, base, 1.0 if result.up else 0.0, up)
        for sample in result.peer_samples:
            labels = tuple(sorted((*sample.labels, *extra))) if several else sample.labels
            add(sample.name, labels, sample.value, sample.spec)


# prometheus_client's process metrics (read from /proc on each scrape), registered nowhere.
_PROCESS = ProcessCollector(registry=None)


@dataclass(frozen=True)
class Format:
    """What the scraper asked for (its Accept header): OpenMetrics or the text format,
    and for OpenMetrics whether names are escaped with `dots`."""

    content_type: str
    openmetrics: bool = False
    dots: bool = False


TEXT = Format("text/plain; version=0.0.4; charset=utf-8")


def negotiate(accept: str | None) -> Format:
    """prometheus_client's negotiation (the Content-Type it would answer with) of the
    Accept header's media ranges we can answer, most preferred first: none refused with
    q=0, and OpenMetrics only in the versions prometheus_client writes (its choose_encoder
    would echo any version asked for, version=99.0.0 included)."""
    _encoder, content_type = choose_encoder(_answerable(accept or ""))
    if content_type.startswith("text/plain"):
        return Format(content_type)
    return Format(content_type, True, content_type.endswith("; escaping=dots"))


# The OpenMetrics versions prometheus_client writes (openmetrics.exposition), and so does
# render: the same bytes for dbgauge's families (no native histograms).
OPENMETRICS_VERSIONS = ("1.0.0", "2.0.0")


def _answerable(accept: str) -> str:
    """The Accept header's ranges by preference (q, highest first, ties in order), less
    those refused (q=0, or a q that is not a number) and OpenMetrics versions we do not
    write. Anything else is prometheus_client's to judge."""
    ranked: list[tuple[float, int, str]] = []
    for i, item in enumerate(accept.split(",")[:64]):  # a header is short; bound the work
        params = [p.strip() for p in item.split(";")]
        media, q, known, kept = params[0].lower(), 1.0, True, [params[0]]
        for param in params[1:]:
            name, _, value = param.partition("=")
            name, value = name.strip().lower(), value.strip()
            if name == "q":
                try:
                    q = float(value) if len(value) <= 8 else -1.0
                except ValueError:
                    q = -1.0
                continue
            if media == "application/openmetrics-text" and name == "version":
                known = value in OPENMETRICS_VERSIONS
            kept.append(param)
        if known and 0 < q <= 1:
            ranked.append((-q, i, ";".join(kept)))
    return ",".join(item for _q, _i, item in sorted(ranked))


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


def _head(name: str, type_: str, help_: str, fmt: Format) -> str:
    """A family's HELP and TYPE lines. `name` is its samples' name (a histogram's: its
    family name) and `type_` counter, gauge, untyped or histogram: OpenMetrics names a
    counter family without `_total`, calls untyped `unknown` and escapes quotes in HELP
    too."""
    if fmt.openmetrics:
        if type_ == "counter" and not name.endswith("_total"):
            type_ = "unknown"  # a peer's counter named without _total keeps its name
        elif type_ == "counter":
            name = name.removesuffix("_total")
        if type_ == "untyped":
            type_ = "unknown"
        escaped = _escape(help_)
    else:
        escaped = help_.replace("\\", r"\\").replace("\n", r"\n")
    if fmt.dots:
        name = name.replace("_", "__")
    return f"# HELP {name} {escaped}\n# TYPE {name} {type_}\n"


# A label set's `{...}` text and a family's HELP/TYPE lines, kept across scrapes: the same
# series and families come back on every scrape, most families hold one or two samples (a
# setting, a counter), and rendering them anew cost more than their values. Bounded: both
# are forgotten past _REMEMBERED entries (a label set that changes every scrape).
_REMEMBERED = 50_000
_LABEL_TEXT: dict[Labels, str] = {}
_HEADS: dict[tuple[str, str, str, bool, bool], str] = {}


def _label_text(labels: Labels) -> str:
    text = _LABEL_TEXT.get(labels)
    if text is None:
        if len(_LABEL_TEXT) >= _REMEMBERED:
            _LABEL_TEXT.clear()
        text = _LABEL_TEXT[labels] = "{" + ",".join(
            f'{k}="{_escape(v)}"' for k, v in labels) + "}" if labels else ""
    return text


def _family_head(name: str, type_: str, help_: str, fmt: Format) -> str:
    key = (name, type_, help_, fmt.openmetrics, fmt.dots)
    head = _HEADS.get(key)
    if head is None:
        if len(_HEADS) >= _REMEMBERED:
            _HEADS.clear()
        head = _HEADS[key] = _head(name, type_, help_, fmt)
    return head


def _lines(out: list[str], samples: Samples) -> None:
    """Append a family's sample lines."""
    for sample_name, labels, value in samples:
        text = _LABEL_TEXT.get(labels)
        if text is None:
            text = _label_text(labels)
        number = repr(float(value)) if -math.inf < value < 1e6 else _number(value)
        out.append(f"{sample_name}{text} {number}\n")


def _family_lines(out: list[str], family: Family) -> None:
    """Append the lines of a family whose samples all have its name (all but histograms),
    as `_lines` does, without making (name, labels, value) triples first: most families
    hold a sample or two, and a scrape has hundreds. Most values are finite and below a
    million, which Python and Go print alike (`_number`)."""
    name = family.spec.name
    for labels, value in family.samples:
        text = _LABEL_TEXT.get(labels)
        if text is None:
            text = _label_text(labels)
        number = repr(float(value)) if -math.inf < value < 1e6 else _number(value)
        out.append(f"{name}{text} {number}\n")


def _dots(samples: Samples) -> Samples:
    """Names in the `dots` escaping scheme (an OpenMetrics scraper may ask for it): an
    underscore is doubled (dbgauge's names are in the legacy character set, the only
    other thing the scheme changes)."""
    for name, labels, value in samples:
        yield (name.replace("_", "__"),
               tuple((k.replace("_", "__"), v) for k, v in labels), value)


def render(families: Sequence[Family], process: Iterable[Metric] = (),
           fmt: Format = TEXT) -> bytes:
    """The text exposition format 0.0.4, or OpenMetrics 1.0, as prometheus_client writes
    them; `process` are prometheus_client's process metrics (gauges and counters)."""
    out: list[str] = []

    def add(name: str, type_: str, help_: str, samples: Samples) -> None:
        out.append(_family_head(name, type_, help_, fmt))
        _lines(out, _dots(samples) if fmt.dots else samples)

    # OpenMetrics names a counter family without `_total`: where another family already has
    # that name (a peer's older spelling, pg_stat_bgwriter_buffers_alloc beside
    # pg_stat_bgwriter_buffers_alloc_total), the counter is written `unknown` under its full
    # name instead, so the two never share a family name.
    taken = {f.spec.name for f in families} if fmt.openmetrics else set()
    for family in families:
        spec = family.spec
        type_ = spec.type if spec.type in ("counter", "untyped", "histogram") else "gauge"
        if type_ == "counter" and spec.name.removesuffix("_total") in taken:
            type_ = "untyped"
        if family.names is None and not fmt.dots:
            out.append(_family_head(spec.name, type_, spec.help, fmt))
            _family_lines(out, family)
        else:
            add(spec.name, type_, spec.help, family.named())
    for metric in process:
        add(metric.name + "_total" if metric.type == "counter" else metric.name,
            metric.type, metric.documentation,
            ((s.name, tuple(sorted(s.labels.items())), s.value) for s in metric.samples))
    if fmt.openmetrics:
        out.append("# EOF\n")
    return "".join(out).encode()


def encode(results: Sequence[TargetResult], accept: str | None = None,
           jobs: Sequence[JobSnapshot] = (),
           specs: Mapping[str, MetricSpec] | None = None,
           process: bool = False, config: ConfigLoad | None = None) -> tuple[bytes, str]:
    """Exposition bytes and content type, honouring the Accept header (OpenMetrics).
    `process` adds the daemon's own process_* families (CPU, memory, fds, start time),
    `config` its last config load."""
    fmt = negotiate(accept)
    families = build_families(results, jobs, specs, config)
    extra = list(_PROCESS.collect()) if process else []
    return render(families, extra, fmt), fmt.content_type
