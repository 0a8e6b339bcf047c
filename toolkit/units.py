"""Durations as operators write them (5, 2.5, "500ms", "10s", "1m30s", "2d", and check_postgres'
"1 minute", "10 seconds"), for the YAML config
and the command line alike; kept apart from toolkit.config so the CLI can parse an option
without loading pydantic.

Every duration has an upper bound: a timeout of 1e300 s (or of a 5,000-digit number) is
a typo, and left in it would break every scrape later, far from its cause.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

DAY = 86400.0
MAX_TIMEOUT = DAY  # connect/query/lock/scrape timeouts
MAX_INTERVAL = 31 * DAY  # how often a scheduled job runs
_MAX_DIGITS = 20  # more digits than any sane duration, fewer than any slow conversion
_NUMBER = rf"\d{{1,{_MAX_DIGITS}}}(?:\.\d{{1,{_MAX_DIGITS}}})?"
_DURATION = re.compile(rf"^\s*({_NUMBER})\s*(ms|s|m|h|d|w|y)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY, "w": 7 * DAY,
          "y": 365 * DAY, None: 1.0}
# Prometheus' duration grammar (model.ParseDuration): whole numbers, units from the
# largest down, each at most once, e.g. 1h30m, 1m30s, 2d12h, 1s500ms.
_PART = rf"\d{{1,{_MAX_DIGITS}}}"
_COMPOUND = re.compile(
    r"^\s*" + "".join(rf"(?:({_PART})({u}))?" for u in ("y", "w", "d", "h", "m", "s", "ms"))
    + r"\s*$")
# check_postgres' spellings of one unit (its time units: `'1 minute'`, `10 seconds`, `2 hrs`).
_WORDS = re.compile(
    rf"^\s*({_NUMBER})\s*(?:(msecs?|milliseconds?)|(secs?|seconds?)|(mins?|minutes?)"
    r"|(hrs?|hours?)|(days?)|(weeks?)|(years?))\s*$", re.IGNORECASE)
_WORD_UNITS = (0.001, 1.0, 60.0, 3600.0, DAY, 7 * DAY, 365 * DAY)
_SYNTAX = ("use seconds (5, 2.5) or 500ms, 10s, 1m30s, 1h, 2d (Prometheus' units y w d h m s "
           "ms) or '1 minute', '2 hours' (check_postgres' words)")


def parse_duration(value: Any) -> Any:
    """Accept 5, 2.5, "500ms", "10s", "1m", "1m30s", "2d", "1 minute": seconds as a finite
    float."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 5, 2.5s or 500ms")
    if isinstance(value, int):
        if abs(value) >= 10 ** _MAX_DIGITS:
            raise ValueError(f"a duration of {_digits(value)} digits is not plausible")
        return float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a duration: {_SYNTAX}")
        return value
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            return float(m.group(1)) * _UNITS[m.group(2)]
        m = _WORDS.match(value)
        if m:
            unit = next(i for i, g in enumerate(m.groups()[1:]) if g is not None)
            return float(m.group(1)) * _WORD_UNITS[unit]
        m = _COMPOUND.match(value)
        if m and any(m.groups()):
            groups = m.groups()
            return sum(float(groups[i]) * _UNITS[groups[i + 1]]
                       for i in range(0, len(groups), 2) if groups[i] is not None)
        if len(value) > 40:
            raise ValueError(f"{value[:20]!r}... ({len(value)} characters) is not a duration: "
                             f"{_SYNTAX}")
    raise ValueError(f"{value!r} is not a duration: {_SYNTAX}")


def _digits(value: int) -> str:
    # str() of a huge int is itself refused (sys.int_info.str_digits_check_threshold).
    return f"about {int(value.bit_length() * math.log10(2)) + 1}"


def at_most(maximum: float) -> Callable[[float], float]:
    """A check that a parsed duration is at most `maximum` seconds, with a clear message."""
    def check(seconds: float) -> float:
        if seconds > maximum:
            raise ValueError(f"{seconds:g} s is too long: at most {describe(maximum)}")
        return seconds
    return check


def describe(seconds: float) -> str:
    """86400 -> '1 day (86400 s)'."""
    if seconds >= DAY and seconds % DAY == 0:
        days = int(seconds // DAY)
        return f"{days} day{'s' if days > 1 else ''} ({seconds:g} s)"
    return f"{seconds:g} s"
