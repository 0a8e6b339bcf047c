"""Threshold ranges and perfdata as the monitoring-plugins development guidelines define
them: every range form, its alert semantics, and the perfdata rendering."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from dbgauge.cli import cli
from dbgauge.toolkit.ranges import Range, parse_range
from dbgauge.toolkit.render.plugin import PerfValue, perf_value, quote_label, render_perf


@pytest.mark.parametrize(("spec", "alerting", "quiet"), [
    # the guidelines' table: `10` alerts outside 0..10
    ("10", [-0.1, 10.1, 1e9], [0, 5, 10]),
    # `10:` below 10 (10..inf)
    ("10:", [9.99, 0, -5], [10, 11, 1e12]),
    # `~:10` above 10 (-inf..10)
    ("~:10", [10.01, 1e6], [10, 0, -1e6]),
    # `10:20` outside 10..20
    ("10:20", [9.9, 20.1, 0], [10, 15, 20]),
    # `@10:20` inside 10..20, endpoints included
    ("@10:20", [10, 15, 20], [9.9, 20.1]),
    # the start may be omitted with ':', negatives and decimals
    (":5", [-1, 5.5], [0, 5]),
    ("-5:5", [-5.1, 6], [-5, 0, 5]),
    ("0.5", [0.51], [0.5, 0.0]),
    ("@~:0", [-1, 0], [0.1]),
    ("@10", [0, 10], [10.5, -0.5]),
])
def test_every_range_form_alerts_where_the_guidelines_say(
        spec: str, alerting: list[float], quiet: list[float]) -> None:
    rng = parse_range(spec)
    assert [rng.alerts(v) for v in alerting] == [True] * len(alerting), spec
    assert [rng.alerts(v) for v in quiet] == [False] * len(quiet), spec


def test_parsed_forms_and_their_canonical_text() -> None:
    assert parse_range("10") == Range(0, 10) and str(parse_range("10")) == "10"
    assert parse_range("10:") == Range(10, math.inf) and str(parse_range("10:")) == "10:"
    assert parse_range("~:10") == Range(-math.inf, 10) and str(parse_range("~:10")) == "~:10"
    assert parse_range("10:20") == Range(10, 20) and str(parse_range("10:20")) == "10:20"
    assert parse_range("@10:20") == Range(10, 20, inside=True)
    assert str(parse_range("@10:20")) == "@10:20"
    assert str(parse_range("0:30")) == "30" and str(parse_range(" 1.50 ")) == "1.5"
    assert parse_range(30) == Range(0, 30) and parse_range(2.5) == Range(0, 2.5)
    assert parse_range("10").upper == 10 and parse_range("10:").upper is None
    assert parse_range("10:").lower == 10 and parse_range("@10:").lower is None


@pytest.mark.parametrize(("spec", "says"), [
    ("", "it is empty"), ("@", "it is empty"), ("ten", "'ten' is not a number"),
    ("20:10", "its start 20 is above its end 10"), ("1:x", "'x' is not a number"),
    ("inf", "not a finite number"), ("~", "'~' is not a number"), ("nan:", "finite"),
])
def test_bad_ranges_say_what_is_wrong(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_range(spec)


def test_perfdata_units_min_max_thresholds_and_quoting() -> None:
    assert render_perf(perf_value("db1:lag_seconds", 0.31, {"lag_seconds": ("30", "120")})
                       ) == "'db1:lag_seconds'=0.31s;30;120"
    assert render_perf(perf_value("db1:xid_wraparound_percent", 12.0,
                                  {"xid_wraparound_percent": ("50", "80")})
                       ) == "'db1:xid_wraparound_percent'=12%;50;80;0;100"
    assert render_perf(perf_value("db1:connections_percent", 3.0, {})
                       ) == "'db1:connections_percent'=3%;;;0;100"
    assert render_perf(perf_value("db1:archive_ready_bytes", 1024.0, {})
                       ) == "'db1:archive_ready_bytes'=1024B;;;0"
    assert render_perf(perf_value("db1:archive_failed_total", 7.0, {})
                       ) == "'db1:archive_failed_total'=7c;;;0"
    assert render_perf(perf_value("db1:uptime_seconds", 12.0, {"uptime_seconds": ("600:", "@0:60")})
                       ) == "'db1:uptime_seconds'=12s;600:;@0:60"
    assert render_perf(PerfValue("odd label's=x", 1.0)) == "'odd label''s_x'=1"
    assert quote_label("it's") == "'it''s'"


def test_cli_takes_short_options_and_ranges() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["check", "lag", "-w", "10:", "-c", "ten"])
    assert result.exit_code == 3
    assert result.output.startswith("LAG UNKNOWN - Invalid value for '-c' / '--critical': "
                                    "'ten' is not a range")
    assert result.output.count("\n") == 1
    help_text = runner.invoke(cli, ["check", "lag", "--help"]).output
    for option in ("-w, --warning RANGE", "-c, --critical RANGE", "-t, --timeout SECONDS",
                   "-v, --verbose"):
        assert option in help_text
    result = runner.invoke(cli, ["check", "lag", "-t", "0"])
    assert result.exit_code == 3 and result.output.startswith("LAG UNKNOWN - ")
