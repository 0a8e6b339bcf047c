"""Progress of long runs (a checksum's tables, a pgTAP run's files) for the operator.

On a terminal: one line redrawn in place, `table 3 of 12 shop.orders [#####    ] 45%
ETA 2m10s`. Elsewhere (a log file, a pipe, cron): a status line every `interval`
seconds, as pt-table-checksum's `--progress time,30` prints (or, as its `percentage,N`
and `iterations,N`, every N percent of the work or every N items finished: `Every`),
since a redrawn line would only fill a log with carriage returns. `quiet` turns both off.
`note` clears the bar before printing a line, so bar and notes never mix.

The ETA is the elapsed time scaled by what is left: items are weighted by their size
(a table's estimated rows, 1 per test file).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO

from dbgauge.toolkit.render.text import one_line

DEFAULT_INTERVAL = 30.0  # pt-table-checksum's --progress time,30


@dataclass(frozen=True)
class Every:
    """When a status line is printed off a terminal, as pt's --progress says it: every
    `n` seconds (`time`), every `n` percent of the work (`percentage`) or every `n`
    items finished (`iterations`: tables, files)."""

    kind: str  # time | percentage | iterations
    n: float


_KINDS = ("time", "percentage", "iterations")


def parse_progress(spec: str) -> Every:
    """pt's `--progress time,N` (N seconds, or a duration such as 1m), `percentage,N`
    (N percent, 0 < N <= 100) or `iterations,N` (a whole N)."""
    from dbgauge.toolkit.units import parse_duration

    kind, _, value = (p.strip() for p in spec.partition(","))
    kind = kind.lower()
    if kind not in _KINDS or not value:
        raise ValueError(f"--progress {spec!r}: use time,N (every N seconds), percentage,N "
                         "(every N percent) or iterations,N (every N tables or files), "
                         "as pt-table-checksum's --progress, e.g. time,30")
    if kind == "time":
        n = float(parse_duration(value))
    else:
        try:
            n = float(value) if kind == "percentage" else int(value)
        except ValueError:
            raise ValueError(f"--progress {spec!r}: {value!r} is not a "
                             f"{'number' if kind == 'percentage' else 'whole number'}") from None
    if not 0 < n <= (100 if kind == "percentage" else float("inf")):
        raise ValueError(f"--progress {spec!r}: N must be more than 0"
                         + (" and at most 100" if kind == "percentage" else ""))
    return Every(kind, n)


def clock_text(seconds: float) -> str:
    """90 -> '1m30s', 3725 -> '1h02m', 42 -> '42s'."""
    s = max(0, int(seconds + 0.5))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """Progress over a planned sequence of items (tables or files) drawn on `stream`."""

    def __init__(self, unit: str = "table", *, stream: TextIO | None = None,
                 interval: float | Every | None = DEFAULT_INTERVAL, quiet: bool = False,
                 sequential: bool = True, prefix: str = "dbgauge: ",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.unit = unit
        self.every = interval if isinstance(interval, Every) else None
        # time,N: the status line's period (and a wait's); the other kinds also print a
        # line after DEFAULT_INTERVAL of no progress, so a wait is never silent
        self.interval = interval if not isinstance(interval, Every) else (
            interval.n if interval.kind == "time" else DEFAULT_INTERVAL)
        self._mark = 0.0  # percentage/iterations: where the last line was printed
        self.quiet = quiet
        self.sequential = sequential  # items run one after another (a checksum's tables)
        self.prefix = prefix
        self.clock = clock
        self.drawn = False
        self._names: list[str] = []
        self._weights: dict[str, float] = {}
        self._done: dict[str, float] = {}  # share of each item done, 0..1
        self._current = ""
        self._started = clock()
        self._last_status = self._started
        self._last_progress = self._started  # when progress() was last called
        self._lock = threading.RLock()  # the ticker thread draws too

    def plan(self, items: Sequence[tuple[str, int]]) -> None:
        """The work ahead, in order: (name, size) with size in any unit (rows, 1)."""
        with self._lock:
            self._names = [name for name, _ in items]
            self._weights = {name: float(max(1, size)) for name, size in items}
            self._started = self._last_status = self._last_progress = self.clock()

    def progress(self, name: str, done: int, total: int) -> None:
        """`done` of `total` of item `name` are finished (rows of a table; 1 of 1 for a
        file that ended)."""
        share = min(1.0, done / total) if total else 1.0
        with self._lock:
            self._last_progress = self.clock()
            self._advance(name, share)
            self._show()

    def _advance(self, name: str, share: float) -> None:
        if self.sequential and name in self._weights:
            for earlier in self._names[:self._names.index(name)]:
                self._done[earlier] = 1.0  # the tables before it are behind us
        self._done[name] = max(share, self._done.get(name, 0.0))
        self._current = name

    def fraction(self) -> float:
        """The share of the planned work done, by weight."""
        total = sum(self._weights.values())
        if not total:
            return 0.0
        return sum(self._weights.get(n, 0.0) * d for n, d in self._done.items()) / total

    def eta(self) -> float | None:
        """Seconds left at the pace so far (None before anything is done)."""
        share = self.fraction()
        if share <= 0:
            return None
        return (self.clock() - self._started) * (1 - share) / share

    def position(self) -> tuple[int, int]:
        """(N, M) of 'table N of M': the current item's place in a sequential run, the
        number finished in a parallel one."""
        count = len(self._names)
        if self.sequential and self._current in self._weights:
            return self._names.index(self._current) + 1, count
        return sum(1 for d in self._done.values() if d >= 1.0), count

    @contextmanager
    def ticking(self) -> Iterator[None]:
        """Within the block, the status line keeps coming every `interval` even when no
        progress is reported -- the run waits for a lagging replica, or a server that does
        not answer -- saying for how long nothing moved: a wait is never silent."""
        stop = threading.Event()

        def tick() -> None:
            step = min(1.0, self.interval or 1.0)
            while not stop.wait(step):
                with self._lock:
                    self._show()

        thread = threading.Thread(target=tick, name="progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _show(self) -> None:
        if self.quiet or not self._names:
            return
        n, m = self.position()
        share = self.fraction()
        eta = self.eta()
        left = "" if eta is None else f" ETA {clock_text(eta)}"
        if self.tty:
            bar = "#" * int(share * 20)
            self.stream.write(f"\r\033[K{self.unit} {n} of {m} {one_line(self._current)[-30:]} "
                              f"[{bar:<20}] {share:4.0%}{left}")
            self.stream.flush()
            self.drawn = True
            return
        now = self.clock()
        if not self._due(now):
            return
        self._last_status = now
        ahead = "" if eta is None else f", about {clock_text(eta)} left"
        still = now - self._last_progress
        if self.interval is not None and still >= self.interval:
            ahead = f", waiting: no progress for {clock_text(still)}"
        self.stream.write(f"{self.prefix}{self.unit} {n} of {m} ({one_line(self._current)}): "
                          f"{share:.0%} done, {clock_text(now - self._started)} "
                          f"elapsed{ahead}\n")
        self.stream.flush()

    def _due(self, now: float) -> bool:
        """Whether a status line is due off a terminal: by time, or by the work done
        (percentage, iterations) -- and by time while nothing moves."""
        if self.interval is None:
            return False
        timely = now - self._last_status >= self.interval
        if self.every is None or self.every.kind == "time":
            return timely
        done = (self.fraction() * 100 if self.every.kind == "percentage"
                else sum(1 for d in self._done.values() if d >= 1.0))
        if done - self._mark >= self.every.n:
            self._mark = done - done % self.every.n
            return True
        return timely and now - self._last_progress >= self.interval

    def note(self, text: str) -> None:
        """A line of its own (the bar is cleared first)."""
        with self._lock:
            self.clear()
            self.stream.write(f"{self.prefix}{text}\n")
            self.stream.flush()

    def clear(self) -> None:
        with self._lock:
            if self.drawn:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self.drawn = False
