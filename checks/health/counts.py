"""check_postgres' count forms of query_time, txn_idle and txn_time (its
validate_integer_for_time): `+N` alerts when N or more sessions are in that state, and
`N for T` (or `T for N`, `N and T`) when N or more of them have been so for T or longer.
A plain time stays dbgauge's range of the oldest one's age."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbgauge.toolkit.units import parse_duration

_COUNT = re.compile(r"\+(\d{1,9})")
_FOR = re.compile(r"(.+?)\s+(?:for|and)\s+(.+)", re.IGNORECASE)


@dataclass(frozen=True)
class CountSpec:
    """`count` sessions or more (older than `seconds`, when given) alert."""

    count: int
    seconds: float | None = None
    text: str = ""  # as written, for messages and perfdata

    def hits(self, ages: list[float]) -> int:
        return sum(1 for age in ages if self.seconds is None or age >= self.seconds)


def parse_count_spec(text: str) -> CountSpec | None:
    """The count form `text` is written in; None when it is none (a plain time or range);
    ValueError for one that cannot be read."""
    text = text.strip()
    found = _COUNT.fullmatch(text)
    if found:
        return CountSpec(int(found.group(1)), None, text)
    pair = _FOR.fullmatch(text)
    if pair is None:
        return None
    count, time = pair.group(1).strip(), pair.group(2).strip()
    if count[-1:].isalpha() or re.fullmatch(r"[-+]?\d+", time):  # written T for N
        count, time = time, count
    if not re.fullmatch(r"\+?\d{1,9}", count):
        raise ValueError(f"{text!r}: N for T takes a whole number of sessions N ('5 for "
                         "10 seconds')")
    return CountSpec(int(count.lstrip("+")), float(parse_duration(time)), text)
