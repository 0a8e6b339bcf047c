"""A one-line progress bar on a terminal, for long runs such as a checksum.

Drawn only when the stream is a terminal (a log file or a pipe gets notes, not bars);
`note` clears the bar before printing a line, so bar and notes never mix.
"""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    """`table [#####     ]  50% 1234 rows` redrawn in place on `stream` (stderr)."""

    def __init__(self, stream: TextIO | None = None, prefix: str = "dbgauge: ") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.prefix = prefix
        self.drawn = False

    def progress(self, table: str, rows: int, total: int) -> None:
        """`rows` of an estimated `total` of `table` are done."""
        if not self.tty:
            return
        share = min(1.0, rows / total) if total else 1.0
        bar = "#" * int(share * 30)
        self.stream.write(f"\r{table[:40]:<40} [{bar:<30}] {share:4.0%} {rows} rows")
        self.stream.flush()
        self.drawn = True

    def note(self, text: str) -> None:
        """A line of its own (the bar is cleared first)."""
        self.clear()
        self.stream.write(f"{self.prefix}{text}\n")
        self.stream.flush()

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False
