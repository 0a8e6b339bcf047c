"""`dbgauge heartbeat` without servers: pt-heartbeat's moving averages, usage errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dbgauge.cli import cli
from dbgauge.toolkit.heartbeat import frame_averages


def test_frame_averages_are_pt_heartbeats_1m_5m_15m() -> None:
    samples = [(0.0, 10.0), (700.0, 4.0), (850.0, 2.0), (880.0, 1.0)]
    one, five, fifteen = frame_averages(samples, now=900.0)
    assert one == pytest.approx(1.5)       # the readings at 850 and 880 s
    assert five == pytest.approx(7 / 3)    # and the one at 700 s
    assert fifteen == pytest.approx(17 / 4)  # all four
    assert frame_averages([], now=1.0) == [None, None, None]


@pytest.mark.parametrize(("args", "says"), [
    (["update", "postgresql://u@h/db"], "is a postgres server: the heartbeat is pt-heartbeat's"),
    (["update", "mysql://u@h/", "--table", "a.b.c"], "must be written as schema.table"),
    (["monitor", "mysql://u@h/", "--interval", "1m1m"], "'1m1m' is not a duration"),
    (["monitor", "orders-replica"], "pass --config FILE to use target names"),
])
def test_usage_errors_exit_2_naming_the_problem(args: list[str], says: str) -> None:
    result = CliRunner().invoke(cli, ["heartbeat", *args])
    assert result.exit_code == 2, result.output
    assert says in result.output
