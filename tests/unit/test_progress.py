"""Progress of long runs: 'table N of M', the ETA, status lines off a terminal every
interval (pt's --progress time,N), a redrawn bar on one, nothing with quiet."""

from __future__ import annotations

import io

import pytest

from dbgauge.toolkit.render.progress import Every, Progress, clock_text, parse_progress


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


@pytest.mark.parametrize(("spec", "every"), [
    ("time,30", Every("time", 30.0)), ("time,1m30s", Every("time", 90.0)),
    ("time,100ms", Every("time", 0.1)), ("TIME, 5", Every("time", 5.0)),
    ("percentage,10", Every("percentage", 10.0)), ("percentage,2.5", Every("percentage", 2.5)),
    ("iterations,5", Every("iterations", 5)),
])
def test_progress_option(spec: str, every: Every) -> None:
    """pt-table-checksum's three --progress types."""
    assert parse_progress(spec) == every


@pytest.mark.parametrize("spec", ["percent,10", "iterations,1.5", "time", "time,0", "time,x",
                                  "percentage,0", "percentage,101", "iterations,0"])
def test_progress_option_errors(spec: str) -> None:
    with pytest.raises(ValueError, match=r"--progress|not a duration"):
        parse_progress(spec)


def test_clock_text() -> None:
    assert [clock_text(s) for s in (0, 42, 90, 3725)] == ["0s", "42s", "1m30s", "1h02m"]


def test_a_wait_keeps_printing_and_says_nothing_moved() -> None:
    """What the ticker thread of `ticking()` calls every second while the run waits (a
    lagging or stopped replica): the status line every interval, saying for how long no
    progress was reported, instead of silence."""
    clock, out = Clock(), io.StringIO()
    progress = Progress("table", stream=out, interval=5, clock=clock)
    progress.plan([("s.a", 100)])
    clock.now += 5
    progress.progress("s.a", 40, 100)
    assert out.getvalue().endswith("40% done, 5s elapsed, about 8s left\n")
    for _ in range(10):  # ten ticks a second apart, nothing reported meanwhile
        clock.now += 1
        progress._show()
    lines = out.getvalue().splitlines()
    assert lines[1:] == ["dbgauge: table 1 of 1 (s.a): 40% done, 10s elapsed, waiting: no "
                         "progress for 5s",
                         "dbgauge: table 1 of 1 (s.a): 40% done, 15s elapsed, waiting: no "
                         "progress for 10s"]


def test_a_name_with_a_newline_stays_on_the_status_line() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress("table", stream=out, interval=1, clock=clock)
    progress.plan([("s.a\nb", 10)])
    clock.now += 2
    progress.progress("s.a\nb", 5, 10)
    assert out.getvalue() == ("dbgauge: table 1 of 1 (s.a\\nb): 50% done, 2s elapsed, "
                              "about 2s left\n")


def test_percentage_and_iterations_print_as_the_work_advances() -> None:
    """percentage,25: a line each time another quarter of the work is done, whatever the
    time; iterations,2: a line every second item finished."""
    now = [0.0]
    out = io.StringIO()
    progress = Progress("table", stream=out, interval=Every("percentage", 25),
                        clock=lambda: now[0])
    progress.plan([("a", 10), ("b", 10), ("c", 10), ("d", 10)])
    progress.progress("a", 5, 10)  # 12.5 %
    assert out.getvalue() == ""
    progress.progress("a", 10, 10)  # 25 %
    progress.progress("b", 4, 10)  # 35 %
    progress.progress("b", 10, 10)  # 50 %
    assert [line.split(": ", 1)[1][:23] for line in out.getvalue().splitlines()] == [
        "table 1 of 4 (a): 25% d", "table 2 of 4 (b): 50% d"]
    out = io.StringIO()
    progress = Progress("file", stream=out, interval=Every("iterations", 2), sequential=False,
                        clock=lambda: now[0])
    progress.plan([(f"f{i}", 1) for i in range(5)])
    for i in range(5):
        progress.progress(f"f{i}", 1, 1)
    assert [line.split(" (")[0] for line in out.getvalue().splitlines()] == [
        "dbgauge: file 2 of 5", "dbgauge: file 4 of 5"]
