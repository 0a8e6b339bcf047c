"""Rendering: families merged across targets, self metrics, declared-metric checks."""

from __future__ import annotations

import pytest
from prometheus_client import ProcessCollector

from dbgauge.app import registry
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.exporter.scrape import CollectorRun, SampleOut, TargetResult
from dbgauge.toolkit.metrics import SELF_METRICS, ConfigLoad, MetricSpec, Sample
from dbgauge.toolkit.render.prometheus import (
    TEXT,
    build_families,
    encode,
    negotiate,
    render,
)
from tests.helpers.exposition import reference

REGISTRY = registry()
ALL = REGISTRY.all


def _result(name: str, up: bool, value: float) -> TargetResult:
    labels = (("target", name),)
    samples = (SampleOut("dbgauge_mysql_questions_total", labels, value),) if up else ()
    runs = (CollectorRun("mysql_status", up, 0.01),) if up else ()
    return TargetResult(name, "mysql", labels, up, 0.02,
                        ServerInfo("mariadb", (10, 11, 6), "10.11.6-MariaDB") if up else None,
                        None if up else "down", runs, samples)


def test_one_family_per_metric_across_targets() -> None:
    body, content_type = encode([_result("a", True, 5), _result("b", True, 7),
                                 _result("c", False, 0)], specs=REGISTRY.specs())
    text = body.decode()
    assert content_type.startswith("text/plain")
    assert text.count("# TYPE dbgauge_mysql_questions_total counter") == 1
    assert 'dbgauge_mysql_questions_total{target="a"} 5.0' in text
    assert 'dbgauge_mysql_questions_total{target="b"} 7.0' in text
    assert 'dbgauge_up{target="c"} 0.0' in text
    assert 'dbgauge_up{target="a"} 1.0' in text
    assert 'dbgauge_target_info{flavor="mariadb",kind="mysql",target="a",version="10.11.6"} 1.0' \
        in text
    assert 'target="c",version' not in text
    assert text.count("# TYPE dbgauge_up gauge") == 1
    assert "dbgauge_build_info{" in text
    assert "dbgauge_config_last_reload" not in text  # a /probe: not the daemon's own


def test_the_last_config_load_is_two_gauges() -> None:
    """Prometheus' own names for it (prometheus_config_last_reload_*): a failed reload
    is 0 and keeps the time of the last success."""
    body, _ = encode([_result("a", True, 5)], specs=REGISTRY.specs(),
                     config=ConfigLoad(False, 1795910000.5))
    text = body.decode()
    assert "# TYPE dbgauge_config_last_reload_successful gauge" in text
    assert "\ndbgauge_config_last_reload_successful 0.0\n" in text
    assert "\ndbgauge_config_last_reload_success_timestamp_seconds 1.7959100005e+09\n" in text


def test_openmetrics_when_asked() -> None:
    body, content_type = encode([_result("a", True, 5)],
                                "application/openmetrics-text; version=1.0.0",
                                specs=REGISTRY.specs())
    assert content_type.startswith("application/openmetrics-text")
    assert body.decode().rstrip().endswith("# EOF")


def test_undeclared_samples_are_rejected() -> None:
    collector = REGISTRY["mysql_status"]
    with pytest.raises(ValueError, match="undeclared"):
        collector.validate_sample(Sample("dbgauge_mysql_bogus", 1))
    with pytest.raises(ValueError, match="labels"):
        collector.validate_sample(Sample("dbgauge_mysql_questions_total", 1, {"x": "y"}))


def test_metric_names_follow_conventions() -> None:
    names = [s.name for s in SELF_METRICS] + [s.name for c in ALL for s in c.metrics]
    assert len(names) == len(set(names)), "a metric is declared twice"
    for name in names:
        assert name.startswith("dbgauge_")
    with pytest.raises(ValueError):
        MetricSpec("dbgauge_x", "counter", "counter without _total")
    with pytest.raises(ValueError):
        MetricSpec("dbgauge_x_total", "gauge", "gauge with _total")


def test_text_writer_matches_prometheus_client_byte_for_byte() -> None:
    """The text format is written directly (it is the hot path); prometheus_client's own
    encoder, fed the same families, must give the same bytes."""
    families = build_families([_odd_result()], specs=REGISTRY.specs())
    ours = render(families)
    assert ours == reference(families)[0]
    assert b"1.234567e+06" in ours and b"+Inf" in ours and b"NaN" in ours
    assert b" 1.2345678901e+10\n" in ours  # Go's exponent, two digits (not e+010)


def _odd_result() -> TargetResult:
    """A scrape with every kind of value and of escaping the formats treat differently."""
    labels = (("target", 'odd "name"\\with\nnewline'),)
    dyn = MetricSpec("dbgauge_test_dyn_total", "untyped", 'Untyped\\help\nwith "newline".')
    samples = tuple(SampleOut("dbgauge_mysql_questions_total", labels, v)
                    for v in (0.0, 5.0, 1234567.0, 1e21, 0.000123, float("inf"), float("nan"),
                              -3.5, 123456.789, 12345678901.0, 9.5e15, 2.0**53, -1e12))
    return TargetResult("a", "mysql", labels, True, 0.02,
                        ServerInfo("mariadb", (10, 11, 6), "10.11.6-MariaDB"), None,
                        (CollectorRun("mysql_status", True, 0.01),),
                        (*samples, SampleOut(dyn.name, labels, 2.0, dyn)))


@pytest.mark.parametrize("accept", [
    "application/openmetrics-text; version=1.0.0",
    "application/openmetrics-text",
    "application/openmetrics-text; version=1.0.0; escaping=allow-utf-8",
    "application/openmetrics-text; version=1.0.0; escaping=underscores",
    "application/openmetrics-text; version=1.0.0; escaping=dots",
    "application/openmetrics-text; version=2.0.0",
    "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4",
    "text/plain; version=0.0.4", "*/*", "",
])
def test_one_writer_for_both_formats_matches_prometheus_client(accept: str) -> None:
    """OpenMetrics is written by the same writer as the text format: prometheus_client's
    encoder for what the Accept header negotiates gives the same bytes and content type,
    the daemon's process metrics included."""
    families = build_families([_odd_result()], specs=REGISTRY.specs())
    process = list(ProcessCollector(registry=None).collect())  # as the daemon reads them
    fmt = negotiate(accept)
    assert (render(families, process, fmt), fmt.content_type) == \
        reference(families, process, accept)
    body, content_type = encode([_odd_result()], accept, specs=REGISTRY.specs())
    assert content_type == fmt.content_type and body == render(families, (), fmt)


def test_openmetrics_names_stay_whole_when_a_scraper_asks_for_values_escaping() -> None:
    """dbgauge's names are all in the legacy character set, which the `values` scheme
    leaves as they are (prometheus_client 0.26 prefixed the sample lines alone with U__,
    so they no longer matched their family)."""
    body, content_type = encode([_odd_result()], "application/openmetrics-text; "
                                "version=1.0.0; escaping=values", specs=REGISTRY.specs())
    assert content_type.endswith("escaping=values")
    text = body.decode()
    assert "# TYPE dbgauge_mysql_questions counter" in text and "U__" not in text
    assert 'dbgauge_mysql_questions_total{target="odd \\"name\\"\\\\with\\nnewline"} 5.0' in text


def test_a_name_with_a_colon_keeps_it_on_its_samples_in_openmetrics() -> None:
    """Custom queries may name a metric with a colon: its samples carry the name their
    family has (prometheus_client 0.26 wrote them with `_`, apart from their family)."""
    spec = MetricSpec("dbgauge_app:orders_ratio", "gauge", "A recording-rule style name.")
    result = TargetResult("a", "postgres", (("target", "a"),), True, 0.02, None, None, (),
                          (SampleOut(spec.name, (("target", "a"),), 0.5, spec),))
    for accept in ("", "application/openmetrics-text; version=1.0.0"):
        text = encode([result], accept)[0].decode()
        assert "# TYPE dbgauge_app:orders_ratio gauge\n" in text
        assert 'dbgauge_app:orders_ratio{target="a"} 0.5\n' in text


@pytest.mark.parametrize(("accept", "expected"), [
    ("application/openmetrics-text; version=99.0.0", TEXT.content_type),
    ("application/openmetrics-text; version=3.0.0", TEXT.content_type),
    ("application/openmetrics-text; version=1.0.0; q=0", TEXT.content_type),
    ("application/openmetrics-text;q=0, text/plain", TEXT.content_type),
    ("application/openmetrics-text;q=zero", TEXT.content_type),
    ("text/plain;q=0.5, application/openmetrics-text;version=1.0.0;q=0.9",
     "application/openmetrics-text; version=1.0.0"),
    ("application/openmetrics-text;version=99.0.0;q=0.9, "
     "application/openmetrics-text;version=1.0.0;q=0.5", "application/openmetrics-text; "
                                                         "version=1.0.0"),
])
def test_openmetrics_only_in_a_version_written_and_never_when_refused(
        accept: str, expected: str) -> None:
    """The answer names only a version the renderer writes (not an echo of the request's
    version=99.0.0), and q=0 refuses a media type; preference follows q."""
    fmt = negotiate(accept)
    assert fmt.content_type.startswith(expected), fmt
    assert "99.0.0" not in fmt.content_type and "3.0.0" not in fmt.content_type
    assert fmt.openmetrics == expected.startswith("application/openmetrics-text")
