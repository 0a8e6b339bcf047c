"""Durations as Prometheus writes them (model.ParseDuration), plus dbgauge's decimals."""

from __future__ import annotations

import pytest

from dbgauge.toolkit.units import parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("5", 5.0), ("2.5", 2.5), ("2.5s", 2.5), ("500ms", 0.5), ("10s", 10.0), ("1m", 60.0),
    ("1h", 3600.0), ("2d", 172800.0), ("1w", 604800.0), ("1y", 365 * 86400.0),
    ("1m30s", 90.0), ("1h30m", 5400.0), ("2d12h", 216000.0), ("1s500ms", 1.5),
    ("1h1m1s", 3661.0), ("1y1w1d1h1m1s1ms", 31536000 + 604800 + 86400 + 3661.001),
    (" 1m30s ", 90.0), ("0s", 0.0),
    # check_postgres' words for one unit
    ("1 minute", 60.0), ("5 minutes", 300.0), ("10 seconds", 10.0), ("2 hrs", 7200.0),
    ("1 Day", 86400.0), ("3 weeks", 3 * 604800.0), ("1 year", 365 * 86400.0),
    ("500 msec", 0.5), ("5min", 300.0),
])
def test_each_duration_form(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", [
    "1s1m",      # units out of order (Prometheus refuses it too)
    "1m1m",      # a unit twice
    "1.5m30s",   # decimals only in a single-unit duration
    "1h 30m",    # no blanks inside
    "-5s", "", "ms", "30x", "1d-2h", "5 minutes 3 seconds", "1 minutee",
])
def test_malformed_durations_are_refused_with_the_syntax(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a duration: use seconds .* 1m30s"):
        parse_duration(text)


def test_compound_durations_on_the_command_line() -> None:
    from click.testing import CliRunner

    from dbgauge.cli import cli

    result = CliRunner().invoke(cli, ["collect", "--timeout", "1m1m", "x"])
    assert result.exit_code == 2
    assert "'1m1m' is not a duration" in result.output
