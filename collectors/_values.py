"""How postgres_exporter 0.11 reads a queries file's values (a helper of
`collectors._queries`; the registry skips names starting with '_'): numbers through its
dbToFloat64, labels through dbToString, floats printed as Go's %v, DURATION text as
milliseconds.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from decimal import Decimal

_GO_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                       re.IGNORECASE)


def metric_value(value: object) -> float | None:
    """A column as postgres_exporter's dbToFloat64 reads it; None for NULL and for what
    it cannot read (it would export NaN for NULL: dbgauge leaves the sample out)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, datetime | date):
        return float(math.floor(timestamp(value)))
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str) and _GO_FLOAT.fullmatch(value):
        return float(value)
    return None


def label_value(value: object) -> str:
    """A column as postgres_exporter's dbToString writes a label value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, datetime | date):
        return str(math.floor(timestamp(value)))
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def timestamp(value: datetime | date) -> float:
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is None:  # timestamp without time zone: lib/pq reads it as UTC
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def go_float(value: float) -> str:
    """`value` as Go's %v prints a float64: shortest digits, exponent form below 1e-4
    and from 1e6 on (1e+06, 1.5e-05)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    exp = len(text) + exponent - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exponent >= 0:
        return minus + text + "0" * exponent
    point = len(text) + exponent
    if point > 0:
        return f"{minus}{text[:point]}.{text[point:]}"
    return f"{minus}0.{'0' * -point}{text}"


def duration_ms(value: object) -> float | None:
    """A Go duration string ('1h2m3.5s', '250ms') in whole milliseconds, as
    postgres_exporter's DURATION usage computes it; '-1' and others: None."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str) or value == "-1":
        return None
    m = re.fullmatch(r"([+-]?)((?:\d*\.?\d*(?:ns|us|µs|μs|ms|s|m|h))+|0)", value)
    if m is None:
        return None
    units = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "μs": 1e-3, "ms": 1.0, "s": 1e3,
             "m": 6e4, "h": 3.6e6}
    total = 0.0
    for number, unit in re.findall(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)", m.group(2)):
        if number in ("", "."):
            return None
        total += float(number) * units[unit]
    return float(math.trunc(-total if m.group(1) == "-" else total))
