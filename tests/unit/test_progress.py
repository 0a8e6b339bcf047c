"""Progress of long runs: 'table N of M', the ETA, status lines off a terminal every
interval (pt's --progress time,N), a redrawn bar on one, nothing with quiet."""

from __future__ import annotations

import io

import pytest

from dbgauge.toolkit.render.progress import Progress, clock_text, parse_progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_lines_off_a_terminal_every_interval() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress("table", stream=out, interval=30, clock=clock)
    progress.plan([("s.a", 100), ("s.b", 100), ("s.c", 200)])
    progress.progress("s.a", 50, 100)
    assert out.getvalue() == ""  # not yet 30 s
    clock.now += 60
    progress.progress("s.b", 0, 100)  # s.a is behind us: 100 of 400 rows
    assert out.getvalue() == ("dbgauge: table 2 of 3 (s.b): 25% done, 1m00s elapsed, "
                              "about 3m00s left\n")
    clock.now += 10
    progress.progress("s.b", 100, 100)
    assert out.getvalue().count("\n") == 1  # the next line only 30 s after the last
    clock.now += 30
    progress.progress("s.c", 100, 200)
    assert out.getvalue().endswith("table 3 of 3 (s.c): 75% done, 1m40s elapsed, "
                                   "about 33s left\n")


def test_a_bar_with_eta_on_a_terminal_and_notes_clear_it() -> None:
    clock, out = Clock(), Terminal()
    progress = Progress("file", stream=out, sequential=False, clock=clock)
    progress.plan([("t/a.sql", 1), ("t/b.sql", 1)])
    clock.now += 4
    progress.progress("t/b.sql", 1, 1)
    assert out.getvalue() == "\r\033[Kfile 1 of 2 t/b.sql [##########          ]  50% ETA 4s"
    progress.note("pausing")
    assert out.getvalue().endswith("ETA 4s\r\033[Kdbgauge: pausing\n")
    progress.progress("t/a.sql", 1, 1)
    assert progress.position() == (2, 2) and progress.fraction() == 1.0


def test_quiet_prints_nothing_but_notes() -> None:
    clock, out = Clock(), Terminal()
    progress = Progress("table", stream=out, interval=1, quiet=True, clock=clock)
    progress.plan([("s.a", 10)])
    clock.now += 5
    progress.progress("s.a", 5, 10)
    assert out.getvalue() == ""
    progress.note("a note")
    assert out.getvalue() == "dbgauge: a note\n"


@pytest.mark.parametrize(("spec", "seconds"), [("time,30", 30.0), ("time,1m30s", 90.0),
                                               ("time,100ms", 0.1), ("TIME, 5", 5.0)])
def test_progress_option(spec: str, seconds: float) -> None:
    assert parse_progress(spec) == seconds


@pytest.mark.parametrize("spec", ["percentage,10", "iterations,5", "time", "time,0", "time,x"])
def test_progress_option_errors(spec: str) -> None:
    with pytest.raises(ValueError, match=r"--progress|not a duration"):
        parse_progress(spec)


def test_clock_text() -> None:
    assert [clock_text(s) for s in (0, 42, 90, 3725)] == ["0s", "42s", "1m30s", "1h02m"]
