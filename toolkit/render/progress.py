"""Progress of long runs (a checksum's tables, a pgTAP run's files) for the operator.

On a terminal: one line redrawn in place, `table 3 of 12 shop.orders [#####    ] 45%
ETA 2m10s`. Elsewhere (a log file, a pipe, cron): a status line every `interval`
seconds, as pt-table-checksum's `--progress time,30` prints, since a redrawn line would
only fill a log with carriage returns. `quiet` turns both off. `note` clears the bar
before printing a line, so bar and notes never mix.

The ETA is the elapsed time scaled by what is left: items are weighted by their size
(a table's estimated rows, 1 per test file).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TextIO

from dbgauge.toolkit.render.text import one_line

DEFAULT_INTERVAL = 30.0  # pt-table-checksum's --progress time,30


def parse_progress(spec: str) -> float:
    """pt's `--progress time,N` (N seconds, or a duration such as 1m) -> N seconds."""
    from dbgauge.toolkit.units import parse_duration

    kind, _, value = spec.partition(",")
    if kind.strip().lower() != "time" or not value.strip():
        raise ValueError(f"--progress {spec!r}: use time,N (a status line every N seconds "
                         "when not on a terminal), e.g. time,30")
    seconds = float(parse_duration(value.strip()))
    if seconds <= 0:
        raise ValueError(f"--progress {spec!r}: the interval must be more than 0")
    return seconds


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
                 interval: float | None = DEFAULT_INTERVAL, quiet: bool = False,
                 sequential: bool = True, prefix: str = "dbgauge: ",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.unit = unit
        self.interval = interval
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
        if self.interval is None or now - self._last_status < self.interval:
            return
        self._last_status = now
        ahead = "" if eta is None else f", about {clock_text(eta)} left"
        still = now - self._last_progress
        if still >= self.interval:
            ahead = f", waiting: no progress for {clock_text(still)}"
        self.stream.write(f"{self.prefix}{self.unit} {n} of {m} ({one_line(self._current)}): "
                          f"{share:.0%} done, {clock_text(now - self._started)} "
                          f"elapsed{ahead}\n")
        self.stream.flush()

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
