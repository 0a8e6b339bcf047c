"""Threshold ranges as the monitoring-plugins development guidelines define them.

`-w/--warning` and `-c/--critical` take `[@]start:end`: `10` alerts outside 0..10, `10:`
below 10, `~:10` above 10, `10:20` outside 10..20 and `@10:20` inside it (endpoints
belong to the range). A number may carry `%` (`80%`, `10%:`, `@10%:20%`: all of a
range's numbers or none), as check_postgres writes a share of a limit; a percentage
outside 0..100 is refused. A number may also be a duration (`5m`, `1h30m`, `500ms`:
`toolkit.units`; check_postgres' `'1 minute'` too), as check_postgres writes times; it is
read as seconds, and only a check that measures seconds takes it. A number may be a size
(`10GB`, `500 kB`, `1 TB`: powers of 1024, as PostgreSQL's pg_size_pretty and check_postgres
read them), read as bytes, and only a check that measures bytes takes it. What a bare
number means for a check -- a count, or already a percentage -- is the check's to say
(`checks.health.model.Share`). `-N` alone is check_postgres' backends form "N or fewer
left" (`Range.left`: alerts at a remaining count up to N, `@~:N`), for the check that
says what is left (connections); any other check refuses it. Pure: parsed and rendered
here so that a check, its perfdata and the daemon's `checks:` entries agree on what a
threshold means.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from dbgauge.toolkit.units import parse_duration

_UNIT = re.compile(r"\d\s*([a-zA-Z]+)\s*$")
_SIZE = re.compile(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*(b|bytes?|[kmgtpe]i?b)\s*$", re.IGNORECASE)
_LEFT = re.compile(r"^-\d{1,18}$")
_SIZE_POWER = {"b": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}


@dataclass(frozen=True)
class Range:
    """An alert range; `alerts(value)` says whether a value lies where it should not."""

    start: float = 0.0
    end: float = math.inf
    inside: bool = False  # '@': alert inside start..end instead of outside
    percent: bool = False  # written with '%': a share of a limit
    duration: bool = False  # written with a time unit (5m): in seconds
    size: bool = False  # written with a size unit (10GB): in bytes
    left: bool = False  # written `-N`: alert when N or fewer are left (held against what is)

    def alerts(self, value: float) -> bool:
        within = self.start <= value <= self.end
        return within if self.inside else not within

    @property
    def upper(self) -> float | None:
        """N for the plain form `N` (alert above N), else None."""
        simple = not self.inside and self.start == 0 and math.isfinite(self.end)
        return self.end if simple else None

    @property
    def lower(self) -> float | None:
        """N for the form `N:` (alert below N), else None."""
        simple = not self.inside and self.end == math.inf and math.isfinite(self.start)
        return self.start if simple else None

    def __str__(self) -> str:
        """`-N` for the form "N or fewer left"; else the canonical guideline form, `%`
        after the numbers of a percentage, `s` after
        those of a duration, `B` after those of a size."""
        if self.left:
            return f"-{_num(self.end)}"
        return self._text("%" if self.percent else "s" if self.duration else
                          "B" if self.size else "")

    @property
    def plain(self) -> str:
        """The guideline form without `%`, `s` or `B`, as perfdata carries it."""
        return self._text("")

    def _text(self, unit: str) -> str:
        prefix = "@" if self.inside else ""
        if self.upper is not None:
            return f"{prefix}{_num(self.end)}{unit}"
        start = "~" if self.start == -math.inf else _num(self.start) + unit
        end = "" if self.end == math.inf else _num(self.end) + unit
        return f"{prefix}{start}:{end}"


def _num(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def _number(text: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{spec!r} is not a range: {text!r} is not a number (forms: 10, "
                         "10:, ~:10, 10:20, @10:20)") from None
    if not math.isfinite(value):
        raise ValueError(f"{spec!r} is not a range: {text!r} is not a finite number")
    return value


def parse_range(spec: str | float) -> Range:
    """`10`, `10:`, `~:10`, `10:20`, `@10:20` (a number is the plain form); `80%`,
    `10%:20%`... a percentage, within 0..100."""
    if isinstance(spec, int | float):
        spec = _num(float(spec))
    text = spec.strip()
    if "=" in text:
        raise ValueError(f"{spec!r} is not a range: it is check_postgres' lock spec "
                         "(total=N;waiting=N;MODE=N), which `dbgauge check lock-count` takes")
    if _LEFT.match(text):  # check_postgres' `-10`: 10 or fewer left
        return Range(-math.inf, _number(text[1:], spec), inside=True, left=True)
    inside = text.startswith("@")
    body = text[1:] if inside else text
    if not body:
        raise ValueError(f"{spec!r} is not a range: it is empty (forms: 10, 10:, ~:10, "
                         "10:20, @10:20)")
    first, colon, second = body.partition(":") if ":" in body else ("", "", body)
    numbers = [n.strip() for n in (first, second) if n.strip() not in ("", "~")]
    marked = [n.endswith("%") for n in numbers]
    percent = any(marked)
    if percent and not all(marked):
        raise ValueError(f"{spec!r} is not a range: write % after each of its numbers or "
                         "after none")
    first, second = (n.strip().removesuffix("%") for n in (first, second))
    kinds = {_unit_kind(n) for n in numbers}
    if len(kinds) > 1:
        raise ValueError(f"{spec!r} is not a range: give the same unit to each of its numbers "
                         "or to none")
    kind = kinds.pop() if kinds else ""
    value = {"duration": _seconds, "size": _bytes}.get(kind, _number)
    if colon:
        start = -math.inf if first == "~" else value(first, spec) if first else 0.0
        end = value(second, spec) if second else math.inf
    else:
        start, end = 0.0, value(second, spec)
    if start > end:
        raise ValueError(f"{spec!r} is not a range: its start {_num(start)} is above its end "
                         f"{_num(end)}")
    if percent:
        check_percent(Range(start, end, inside), spec)
    return Range(start, end, inside, percent, kind == "duration", kind == "size")


def _unit_kind(number: str) -> str:
    """'size' (10GB), 'duration' (5m, '1 minute') or '' (a bare number, or one with %)."""
    if _SIZE.match(number):
        return "size"
    return "duration" if _UNIT.search(number) else ""


def _bytes(text: str, spec: str) -> float:
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"{spec!r} is not a range: {text!r} is not a size (10GB, 500 kB)")
    unit = m.group(2).lower()
    power = 0 if unit.startswith("b") else _SIZE_POWER[unit[0]]
    return float(m.group(1)) * 1024.0 ** power


def _seconds(text: str, spec: str) -> float:
    try:
        return float(parse_duration(text))
    except ValueError as exc:
        raise ValueError(f"{spec!r} is not a range: {exc}") from None


def check_percent(rng: Range, spec: object) -> None:
    """A range of percentages must lie within 0..100 (its open ends aside)."""
    if any(math.isfinite(v) and not 0 <= v <= 100 for v in (rng.start, rng.end)):
        raise ValueError(f"{spec!r} is not a percentage: a share of a limit is 0 to 100")


_PEER_SIZE = re.compile(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*(?:([bkmgtpe])[a-z]*)?\s*$",
                        re.IGNORECASE)


def peer_size(text: str) -> float:
    """check_postgres' size (its `size_in_bytes`): a number and an optional unit word of
    which the first letter counts (`100 M`, `1 G`, `500kB`, `2 gigabytes`; bare: bytes),
    powers of 1024. ValueError for anything else."""
    m = _PEER_SIZE.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a size (100 M, 1GB, 500 kB; a bare number is bytes)")
    unit = (m.group(2) or "b").lower()
    return float(m.group(1)) * 1024.0 ** (0 if unit == "b" else _SIZE_POWER[unit])
