"""Threshold ranges and perfdata as the monitoring-plugins development guidelines define
them: every range form, its alert semantics, and the perfdata rendering."""

from __future__ import annotations

import math
import re

import pytest
from click.testing import CliRunner

from dbgauge.cli import cli
from dbgauge.toolkit.ranges import Range, parse_range
from dbgauge.toolkit.render.plugin import PerfValue, perf_value, quote_label, render_perf
from dbgauge.toolkit.result import Status


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


def test_a_percentage_is_marked_and_kept_within_0_to_100() -> None:
    """`80%` (check_postgres' share of a limit): the same range, marked; its text keeps
    the %, its perfdata form drops it. Out of 0..100, or % on one number only: refused."""
    assert parse_range("80%") == Range(0, 80, percent=True)
    assert str(parse_range("80%")) == "80%" and parse_range("80%").plain == "80"
    assert parse_range("@10%:20%") == Range(10, 20, inside=True, percent=True)
    assert str(parse_range("@10%:20%")) == "@10%:20%"
    assert str(parse_range("~:80%")) == "~:80%" and str(parse_range("10%:")) == "10%:"
    assert parse_range("1_300_000_000") == Range(0, 1.3e9)  # check_postgres' spelling
    for spec, says in (("120%", "'120%' is not a percentage: a share of a limit is 0 to 100"),
                       ("-5%:", "is not a percentage"),
                       ("10%:20", "write % after each of its numbers or after none"),
                       ("80%%", "'80%' is not a number")):
        with pytest.raises(ValueError, match=re.escape(says)):
            parse_range(spec)


def test_each_check_reads_a_bare_number_in_its_own_unit() -> None:
    """Connections: a bare number is a count of connections, N% a share (check_postgres'
    backends). Wraparound: a count of transactions; a bare number up to 100 is refused (a
    percentage missing its %). Sequence: a percentage either way, 0..100. Lag: seconds,
    % refused. Never one silently read as the other."""
    from dbgauge.checks.health import health_checks
    from dbgauge.toolkit.errors import ConfigError

    checks = health_checks()
    conns = checks["connections"].limits("200", None)
    assert conns is not None
    assert conns.warning == Range(0, 200) and conns.critical == Range(0, 95, percent=True)
    # 150 of 1000 connections (15 %): under the 200-connection warning, under 95 %
    assert conns.status(15.0, {"connections": 150.0}) is Status.OK
    assert conns.status(25.0, {"connections": 250.0}) is Status.WARNING  # 250 connections
    assert conns.status(96.0, {"connections": 250.0}) is Status.CRITICAL  # 96 % of the limit
    assert conns.perf("connections_percent") == {"connections": ("200", None),
                                                 "connections_percent": (None, "95")}
    share = checks["connections"].limits("80%", "90%")
    assert share is not None and share.status(85.0, {"connections": 5.0}) is Status.WARNING
    assert share.perf("connections_percent") == {"connections_percent": ("80", "90")}
    wrap = checks["txn-wraparound"].limits("1_300_000_000", "1400000000")
    assert wrap is not None
    assert wrap.status(65.0, {"xid_age": 1.35e9}) is Status.WARNING  # by the count, not 65 %
    assert wrap.status(10.0, {"xid_age": 1.0e9}) is Status.OK
    seq = checks["sequence"].limits("90%", "97")
    assert seq is not None and (seq.warning, seq.critical) == (Range(0, 90), Range(0, 97))
    for name, w, says in (
            ("txn-wraparound", "75", "--warning 75: a bare number is a count of transactions "
                                     "here (as check_postgres reads it), and 75 transactions "
                                     "is no plausible threshold: write 75% for a share"),
            ("sequence", "200", "--warning 200: '200' is not a percentage"),
            ("lag", "20%", "--warning 20%: this check's value is not a share of a limit"),
            ("connections", Range(0, 120, percent=True), "'120' is not a percentage")):
        with pytest.raises(ConfigError, match=re.escape(says)):
            checks[name].limits(w, None)


def test_a_scheduled_check_reads_thresholds_the_same_way() -> None:
    """The daemon's `checks:` entries go through the same reading: a YAML 200 is 200
    connections, "80%" a share, a bare 75 for wraparound is refused at config time."""
    from dbgauge.app import scheduled_checks
    from dbgauge.checks.schedule import validate_check_job

    checks = scheduled_checks()
    validate_check_job(checks, "connections", 200, "95%")
    with pytest.raises(ValueError, match="75 transactions is no plausible threshold"):
        validate_check_job(checks, "txn-wraparound", 75, None)


def test_a_time_threshold_may_carry_its_unit() -> None:
    """check_postgres writes times with units: `-w 5m` is 300 seconds on a check of
    seconds, refused (exit 3) on any other; all of a range's numbers carry one or none."""
    from dbgauge.checks.health import health_checks
    from dbgauge.toolkit.errors import ConfigError

    assert parse_range("5m") == Range(0, 300, duration=True) and str(parse_range("5m")) == "300s"
    assert parse_range("@1m:1h30m") == Range(60, 5400, inside=True, duration=True)
    assert parse_range("10m:").plain == "600:" and parse_range("500ms").end == 0.5
    with pytest.raises(ValueError, match="give the same unit to each of its numbers or to none"):
        parse_range("5m:600")
    checks = health_checks()
    lag = checks["lag"].limits("5m", "1h")
    assert lag is not None and (lag.warning, lag.critical) == (Range(0, 300), Range(0, 3600))
    assert lag.status(301.0) is Status.WARNING and lag.status(299.0) is Status.OK
    uptime = checks["uptime"].limits("10m:", None)
    assert uptime is not None and uptime.warning == Range(600)
    for name in ("connections", "history-list", "archiver"):
        with pytest.raises(ConfigError, match="this check's value is not a time"):
            checks[name].limits("5m", None)


@pytest.mark.parametrize(("spec", "seconds"), [
    ("10s", 10), ("1 minute", 60), ("'1 minute'".strip("'"), 60), ("1d", 86400),
    ("2 hours", 7200), ("30 sec", 30), ("5 mins", 300), ("1 week", 604800), ("500ms", 0.5),
])
def test_check_postgres_times_on_a_check_of_seconds(spec: str, seconds: float) -> None:
    """check_postgres' time spellings (`--warning='1 minute'`, `-w 1d`) are seconds on a
    check of seconds, through the one range parser and the check's thresholds."""
    from dbgauge.checks.health import health_checks

    assert parse_range(spec) == Range(0, seconds, duration=True)
    for name in ("lag", "last-vacuum", "pgbouncer-pools"):
        limits = health_checks()[name].limits(spec, spec)
        assert limits is not None and limits.critical == Range(0, seconds), name


@pytest.mark.parametrize(("spec", "size"), [
    ("10GB", 10 * 1024 ** 3), ("500 kB", 500 * 1024), ("1 TB", 1024 ** 4), ("2MiB", 2 << 20),
    ("100b", 100), ("7 bytes", 7), ("1.5gb", 1.5 * 1024 ** 3),
])
def test_sizes_are_bytes_in_powers_of_1024(spec: str, size: float) -> None:
    """check_postgres and pg_size_pretty write sizes as 500 kB, 10GB (1024-based)."""
    assert parse_range(spec) == Range(0, size, size=True)
    assert parse_range(f"@{spec}:{spec}") == Range(size, size, inside=True, size=True)
    assert str(parse_range(spec)) == f"{size:.0f}B" and parse_range(spec).plain == f"{size:.0f}"


def test_a_size_threshold_only_on_a_check_of_bytes() -> None:
    """A size on a check of seconds or counts is refused (exit 3); on a check of bytes it
    is bytes; sizes and times do not mix in one range."""
    from dbgauge.checks.health.model import Thresholds
    from dbgauge.toolkit.errors import ConfigError

    with pytest.raises(ValueError, match="the same unit"):
        parse_range("10GB:1h")
    sized = Thresholds.above(1.0, 2.0)
    with pytest.raises(ConfigError, match="this check's value is not a size"):
        sized.override("10GB", None)
    sized = Thresholds(Range(end=1.0), Range(end=2.0), bytes=True)
    got = sized.override("1 kB", "1MB")
    assert (got.warning, got.critical) == (Range(0, 1024), Range(0, 1024 ** 2))
    assert got.status(2048.0) is Status.WARNING and got.bytes


def test_usage_errors_are_one_unknown_line_exit_3() -> None:
    """A bare `dbgauge check` is a usage error (UNKNOWN), not click's exit 2 (CRITICAL to a
    monitor); -c's help says the forms plainly; a unit a check cannot take is refused."""
    from tests.helpers.dsns import no_known_secrets

    with no_known_secrets():  # another test's secret would mask a piece of the output
        bare = CliRunner().invoke(cli, ["check"])
        help_out = CliRunner().invoke(cli, ["check", "lag", "--help"]).output
        wrong = CliRunner().invoke(cli, ["check", "lag", "-w", "10GB", "--node", "x"])
    assert bare.exit_code == 3 and bare.output.count("\n") == 1
    assert bare.output.startswith("CHECK UNKNOWN - no check named")
    help_text = " ".join(help_out.split())
    assert "10 alerts above 10, 10: below 10, 10:20 outside 10..20" in help_text
    assert "'1 minute'" in help_text
    assert wrong.exit_code == 3 and "not a size" in wrong.output


def test_usage_errors_under_format_json_are_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--format json` asks for JSON whatever goes wrong: a usage error (an unknown option,
    a range that does not parse) is the check's JSON document, UNKNOWN with a `usage`
    finding, exit 3 -- not a plugin line a JSON consumer cannot read."""
    import json
    import sys

    from tests.helpers.dsns import no_known_secrets

    for args in (["check", "lag", "--format", "json", "--bogus"],
                 ["check", "lag", "-w", "abc", "--format=json"],
                 ["heartbeat", "check", "--format", "json", "--bogus"]):
        monkeypatch.setattr(sys, "argv", ["dbgauge", *args])  # what the command line said
        with no_known_secrets():
            got = CliRunner().invoke(cli, args)
        assert got.exit_code == 3, (args, got.output)
        doc = json.loads(got.output)
        assert doc["status"] == "UNKNOWN" and doc["findings"][0]["kind"] == "usage", doc
        assert doc["check"] == ("heartbeat" if args[0] == "heartbeat" else "lag")
    monkeypatch.setattr(sys, "argv", ["dbgauge", "check", "lag", "--bogus"])
    plain = CliRunner().invoke(cli, ["check", "lag", "--bogus"])
    assert plain.exit_code == 3 and plain.output.startswith("LAG UNKNOWN - No such option")
