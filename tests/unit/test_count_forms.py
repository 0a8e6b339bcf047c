"""check_postgres' count forms of query_time, txn_idle and txn_time (`+N`, `N for T`), as
the -w/-c of query-time, txn-idle and txn-time read them."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.counts import CountSpec, parse_count_spec
from dbgauge.checks.health.options import check_limits
from dbgauge.cli import cli
from dbgauge.toolkit.ranges import parse_range


@pytest.mark.parametrize("text, count, seconds", [
    ("+50", 50, None), ("5 for 10 seconds", 5, 10.0), ("10s for 5", 5, 10.0),
    ("3 and 2m", 3, 120.0), ("+2 for 1 minute", 2, 60.0)])
def test_count_forms(text: str, count: int, seconds: float | None) -> None:
    spec = parse_count_spec(text)
    assert spec is not None and (spec.count, spec.seconds) == (count, seconds)


@pytest.mark.parametrize("text", ["50", "10s", "5:", "~:5", "@1:2"])
def test_plain_levels_are_not_counts(text: str) -> None:
    assert parse_count_spec(text) is None


def test_a_count_form_that_cannot_be_read_is_refused() -> None:
    with pytest.raises(ValueError, match="whole number of sessions"):
        parse_count_spec("x for 10s")


def test_hits_count_sessions_at_least_that_old() -> None:
    assert CountSpec(2, 10.0).hits([30.0, 10.0, 9.9]) == 2
    assert CountSpec(2).hits([0.0, 0.0, 0.0]) == 3


def test_a_level_in_a_count_form_never_alerts_on_the_age() -> None:
    """`-c '5 for 10s'` alone: no warning (a level alone), no age level; `-w 60 -c +5`:
    the warning's age range, the critical by count."""
    check = health_checks()["txn-idle"]
    alone = check_limits(check, None, parse_count_spec("5 for 10s"))
    assert alone is not None
    assert alone.warning.start == alone.critical.start == -math.inf
    mixed = check_limits(check, parse_range("60"), parse_count_spec("+5"))
    assert mixed is not None and mixed.warning.end == 60 and mixed.critical.start == -math.inf


def test_plus_n_is_a_count_not_seconds_on_the_command_line() -> None:
    """Before, `-w +50` silently meant 50 seconds; now it is refused where there is no
    count to hold it against (MySQL's txn-time says so, UNKNOWN) and a count elsewhere."""
    result = CliRunner().invoke(cli, ["check", "txn-idle", "--node",
                                      "postgresql://u@127.0.0.1:1/db", "-w", "x for 5s"])
    assert result.exit_code == 3 and "whole number of sessions" in result.output


