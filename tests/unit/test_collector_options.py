"""Collector options (top-N limits, files) and families named at run time."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from dbgauge.app import parse_config
from dbgauge.toolkit.db import Connection, ServerInfo
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter.scrape import CollectorRun, SampleOut, TargetResult
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample
from dbgauge.toolkit.registry import Registry
from dbgauge.toolkit.render.prometheus import encode

ROWS = MetricSpec("dbgauge_test_rows", "gauge", "Rows.", ("table",))


class TopTables(Collector[int]):
    name = "test_top"
    help = "A test collector with a limit and run-time families."
    kind = "postgres"
    flavors = frozenset({"postgres"})
    metrics = MetricTable(ROWS)
    dynamic_prefixes = ("dbgauge_test_dyn_",)
    options = {"limit": Option(50, "How many tables."), "file": Option("x", "A file.")}

    def read(self, conn: Connection) -> int:
        return int(self.setting("limit"))

    def samples(self, facts: int) -> Iterable[Sample]:
        for i in range(facts):
            yield Sample(ROWS.name, i, {"table": f"t{i}"})


def test_options_default_then_configured_copy() -> None:
    base = TopTables()
    assert base.setting("limit") == 50
    assert base.configured({}) is base
    tuned = base.configured({"limit": 3})
    assert tuned.setting("limit") == 3 and base.setting("limit") == 50
    assert [s.labels["table"] for s in tuned.samples(tuned.read(None))] == ["t0", "t1", "t2"]  # type: ignore[arg-type]
    registry = Registry([base])
    (only,) = registry.enabled("postgres", None, {"test_top": {"limit": 2}})
    assert only.setting("limit") == 2


@pytest.mark.parametrize(("given", "message"), [
    ({"limt": 3}, "has no option 'limt' (its options: file, limit, refresh)"),
    ({"limit": 0}, "test_top.limit: 0 is out of range: use 1 to 10000"),
    ({"limit": 10 ** 5000}, "test_top.limit: that number is out of range"),
    ({"limit": "ten"}, "must be a whole number from 1 to 10000"),
    ({"limit": True}, "booleans are not collector options"),
    ({"file": ""}, "test_top.file: must be a non-empty string"),
])
def test_bad_options_say_what_is_wrong(given: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TopTables().check_options(given)


def test_config_checks_collector_options_with_yaml_path() -> None:
    text = ("targets:\n  - name: a\n    kind: mysql\n    dsn: mysql://u@h/\n"
            "    collector_options:\n      mysql_status: {limit: 5}\n")
    with pytest.raises(ConfigError, match=r"cfg.yaml:2: targets\[0\]: .*collector "
                                          r"mysql_status has no option 'limit'"):
        parse_config(text, "cfg.yaml")
    text = ("daemon:\n  collector_options:\n    no_such: {limit: 5}\n"
            "targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/'}\n")
    with pytest.raises(ConfigError, match="unknown collector 'no_such' for any kind"):
        parse_config(text, "cfg.yaml")
    text = ("targets:\n  - name: a\n    kind: mysql\n    dsn: mysql://u@h/\n"
            "    collector_options:\n      postgres_database: {}\n")
    with pytest.raises(ConfigError, match="unknown collector 'postgres_database' for kind mysql"):
        parse_config(text, "cfg.yaml")


def test_daemon_options_are_defaults_a_target_overrides() -> None:
    cfg = parse_config("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/'}\n", "c.yaml")
    assert cfg.target("a").collector_options == {}


def test_dynamic_samples_need_their_prefix_and_render_with_their_spec() -> None:
    collector = TopTables()
    spec = MetricSpec("dbgauge_test_dyn_questions_total", "counter", "Questions.")
    assert collector.validate_sample(Sample(spec.name, 1, {}, spec)) is spec
    stray = MetricSpec("pg_other", "gauge", "Elsewhere.")
    with pytest.raises(ValueError, match="outside its dynamic prefixes"):
        collector.validate_sample(Sample(stray.name, 1, {}, stray))
    labels = (("target", "a"),)
    shadow = MetricSpec("dbgauge_up", "gauge", "An impostor.")
    result = TargetResult("a", "postgres", labels, True, 0.1,
                          ServerInfo("postgres", (15, 4), "15.4"),
                          collectors=(CollectorRun("test_top", True, 0.01),),
                          samples=(SampleOut(spec.name, labels, 7.0, spec),
                                   SampleOut("dbgauge_up", labels, 9.0, shadow)))
    text = encode([result])[0].decode()
    assert "# TYPE dbgauge_test_dyn_questions_total counter" in text
    assert 'dbgauge_test_dyn_questions_total{target="a"} 7.0' in text
    assert 'dbgauge_up{target="a"} 9.0' not in text  # a run-time family never shadows ours


def test_refresh_serves_a_collection_again_until_it_is_due(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A collector with `refresh` is asked again only once its interval has passed (its
    samples are served meanwhile); refresh 0 asks on every scrape."""
    from dbgauge.toolkit.exporter import scrape
    from dbgauge.toolkit.targets import Target

    reads: list[int] = []

    class Slow(TopTables):
        refresh = 60

        def read(self, conn: Connection) -> int:
            reads.append(1)
            return len(reads)  # a different answer every time it is really asked

    clock = [1000.0]
    monkeypatch.setattr(scrape.time, "monotonic", lambda: clock[0])
    runner = scrape.TargetRunner(Target("a", "postgres", "postgresql://u@h/d"), [])
    for collector, expected in ((Slow(), [1, 1, 2]), (Slow().configured({"refresh": 0}),
                                                      [3, 4, 5])):
        runner._cache.clear()
        seen = []
        for step in (0.0, 59.0, 61.0):
            clock[0] = 1000.0 + step
            out: list[scrape.SampleOut] = []
            run = runner._run(collector, None, out, [])  # type: ignore[arg-type]
            assert run.success
            seen.append(len(out))
        assert seen == expected
    with pytest.raises(ValueError, match="refresh: 86401 is out of range: use 0 to 86400"):
        Slow().check_options({"refresh": 86401})
